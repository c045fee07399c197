package kerneldetect

import (
	"strings"
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

func TestCheckTracefs(t *testing.T) {
	t.Parallel()
	const root = "Uid:\t0\t0\t0\t0\n"
	const nobody = "Uid:\t65534\t65534\t65534\t65534\n"
	for _, tc := range []struct {
		name   string
		files  fstest.MapFS
		status Status
		want   string
	}{
		{"no mount table", fstest.MapFS{}, StatusWarn, "could not tell"},
		{"not mounted", fstest.MapFS{"proc/self/mounts": {Data: []byte("proc /proc proc rw 0 0\n")}}, StatusWarn, "no tracefs"},
		{"mounted, no marker", fstest.MapFS{"proc/self/mounts": {Data: []byte("tracefs /sys/kernel/tracing tracefs rw 0 0\n")}},
			StatusWarn, "missing or not accessible"},
		{"root", fstest.MapFS{
			"proc/self/status":                {Data: []byte(root)},
			"proc/self/mounts":                {Data: []byte("tracefs /sys/kernel/tracing tracefs rw 0 0\n")},
			"sys/kernel/tracing/trace_marker": {Data: nil, Mode: 0o200},
		}, StatusOK, "tracing at /sys/kernel/tracing; trace_marker writable"},
		{"debugfs", fstest.MapFS{
			"proc/self/status":                      {Data: []byte(root)},
			"proc/self/mounts":                      {Data: []byte("debugfs /sys/kernel/debug debugfs rw 0 0\n")},
			"sys/kernel/debug/tracing/trace_marker": {Data: nil, Mode: 0o200},
		}, StatusOK, "tracing at /sys/kernel/debug/tracing"},
		{"unprivileged", fstest.MapFS{
			"proc/self/status":                {Data: []byte(nobody)},
			"proc/self/mounts":                {Data: []byte("tracefs /sys/kernel/tracing tracefs rw 0 0\n")},
			"sys/kernel/tracing/trace_marker": {Data: nil, Mode: 0o200},
		}, StatusWarn, "uid 65534 may not be able to write"},
	} {
		r, err := DetectFS(tc.files)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var c *Check
		for i := range r.Checks {
			if r.Checks[i].ID == CheckTracefs {
				c = &r.Checks[i]
			}
		}
		if c == nil || c.Status != tc.status || !strings.Contains(c.Evidence, tc.want) {
			t.Errorf("%s: tracefs check %+v, want %s naming %q", tc.name, c, tc.status, tc.want)
		}
	}
}
