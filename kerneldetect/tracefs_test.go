package kerneldetect

import (
	"testing"
	"testing/fstest"
)

func TestParseTracefs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mounts, want string
	}{
		{"none", "proc /proc proc rw 0 0\n", ""},
		{"empty", "", ""},
		{"tracefs", "proc /proc proc rw 0 0\ntracefs /sys/kernel/tracing tracefs rw,nosuid 0 0\n", "/sys/kernel/tracing"},
		{"debugfs only", "debugfs /sys/kernel/debug debugfs rw 0 0\n", "/sys/kernel/debug/tracing"},
		{"tracefs wins over debugfs", "debugfs /sys/kernel/debug debugfs rw 0 0\ntracefs /t tracefs rw 0 0\n", "/t"},
		{"escaped space", `tracefs /mnt/my\040trace tracefs rw 0 0`, "/mnt/my trace"},
		{"bad escape kept", `tracefs /mnt/a\9 tracefs rw 0 0`, `/mnt/a\9`},
		{"short line", "tracefs /t\n", ""},
		{"relative point skipped", "tracefs t tracefs rw 0 0\n", ""},
	} {
		if got := ParseTracefs([]byte(tc.mounts)); got != tc.want {
			t.Errorf("%s: ParseTracefs = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFindTracefs(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"proc/self/mounts": {Data: []byte("tracefs /sys/kernel/tracing tracefs rw 0 0\n")}}
	dir, err := FindTracefs(fsys)
	if err != nil || dir != "/sys/kernel/tracing" {
		t.Fatalf("FindTracefs = %q, %v", dir, err)
	}
	if dir, err := FindTracefs(fstest.MapFS{}); err == nil {
		t.Fatalf("FindTracefs without a mount table = %q, nil error", dir)
	}
}

func FuzzParseTracefs(f *testing.F) {
	f.Add([]byte("tracefs /sys/kernel/tracing tracefs rw 0 0\n"))
	f.Add([]byte(`debugfs /a\040b debugfs rw 0 0`))
	f.Fuzz(func(t *testing.T, b []byte) { ParseTracefs(b) })
}
