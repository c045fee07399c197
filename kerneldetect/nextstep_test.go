package kerneldetect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNextSteps(t *testing.T) {
	t.Parallel()
	debian := Distro{ID: "debian", Arch: "amd64", ArchFromRelease: true}
	for _, tc := range []struct {
		name string
		r    Report
		want []string // substrings, one per step, in order
	}{
		{"unknown", Report{}, []string{"could not be identified"}},
		{"dynamic none on Debian", Report{Kind: Vanilla, Distro: debian,
			Preempt: PreemptInfo{Model: ModelNone, Dynamic: true, Mode: ModelNone, Source: "proc/config.gz"}},
			[]string{"preempt=full", "threadirqs", "linux-image-rt-amd64"}},
		{"dynamic voluntary now, from debugfs", Report{Kind: Vanilla, Distro: Distro{ID: "debian", Arch: "arm64", ArchFromRelease: true},
			Preempt:      PreemptInfo{Model: ModelVoluntary, Dynamic: true, Mode: ModelVoluntary, Source: "sys/kernel/debug/sched/preempt"},
			ThreadedIRQs: Setting{Value: "yes"}},
			[]string{"echo full > /sys/kernel/debug/sched/preempt", "linux-image-rt-arm64"}},
		{"full preempt with threadirqs on Ubuntu", Report{Kind: Preempt, Distro: Distro{ID: "ubuntu", IDLike: "debian"},
			Preempt: PreemptInfo{Model: ModelFull}, ThreadedIRQs: Setting{Value: "yes"}},
			[]string{"pro enable realtime-kernel"}},
		{"non-dynamic voluntary, unknown distro", Report{Kind: Vanilla, Preempt: PreemptInfo{Model: ModelVoluntary}},
			[]string{"threadirqs", "CONFIG_PREEMPT_RT"}},
		{"Debian-like, not a Debian kernel", Report{Kind: Vanilla, Distro: Distro{ID: "raspbian", IDLike: "debian", Arch: "arm64"},
			Preempt: PreemptInfo{Model: ModelFull}, ThreadedIRQs: Setting{Value: "yes"}},
			[]string{"apt search linux-image-rt"}},
		{"RT with a failed check", Report{Kind: PreemptRT, Checks: []Check{{ID: CheckSchedFIFO, Status: StatusFail}, {ID: CheckSMT, Status: StatusWarn}}},
			[]string{"fix the failed checks (sched_fifo)"}},
		{"RT, ready", Report{Kind: Xenomai}, []string{"measure"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.r.NextSteps()
			require.Len(t, got, len(tc.want), "%q", got)
			for i, w := range tc.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
	var nilReport *Report
	assert.NotEmpty(t, nilReport.NextSteps())
}

// Every fixture tree, every machine kind, gets a next step; a
// PREEMPT_DYNAMIC kernel in none or voluntary mode is told about
// preempt=full, a Debian kernel about its RT package.
func TestNextStepsFixtures(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures {
		r, err := DetectFS(os.DirFS(filepath.Join("testdata", f.tree)))
		require.NoError(t, err)
		steps := r.NextSteps()
		require.NotEmpty(t, steps, f.tree)
		all := strings.Join(steps, "\n")
		if r.Preempt.Dynamic && !r.Kind.IsRealtime() && (r.Preempt.Effective() == ModelNone || r.Preempt.Effective() == ModelVoluntary) {
			assert.Contains(t, all, "preempt=full", f.tree)
		}
		if !r.Kind.IsRealtime() && strings.HasSuffix(r.Uname.Release, "-amd64") {
			assert.Contains(t, all, "linux-image-rt-amd64", f.tree)
		}
	}
}

func TestDistro(t *testing.T) {
	t.Parallel()
	r, err := DetectFS(fstest.MapFS{
		"proc/sys/kernel/osrelease": {Data: []byte("6.8.0-1012-realtime\n")},
		"proc/sys/kernel/version":   {Data: []byte("#13-Ubuntu SMP PREEMPT_RT Fri Aug  9 2024\n")},
		"usr/lib/os-release":        {Data: []byte("PRETTY_NAME=\"Ubuntu 24.04 LTS\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n")},
	})
	require.NoError(t, err)
	assert.Equal(t, Distro{ID: "ubuntu", IDLike: "debian", VersionID: "24.04", Source: "usr/lib/os-release"}, r.Distro)

	r, err = DetectFS(os.DirFS(filepath.Join("testdata", "debian-6.1-voluntary")))
	require.NoError(t, err)
	assert.Equal(t, Distro{ID: "debian", Arch: "amd64", ArchFromRelease: true, Source: "proc/sys/kernel/version"}, r.Distro)
}

func TestParseOSRelease(t *testing.T) {
	t.Parallel()
	id, like, ver := parseOSRelease([]byte("NAME=\"Debian GNU/Linux\"\nID=debian\nVERSION_ID='12'\n"))
	assert.Equal(t, []string{"debian", "", "12"}, []string{id, like, ver})
	id, _, _ = parseOSRelease([]byte("ID=deb\x01ian\n"))
	assert.Empty(t, id, "a value with a control byte is dropped")
	id, _, _ = parseOSRelease([]byte("ID=" + strings.Repeat("x", 1000)))
	assert.LessOrEqual(t, len(id), maxOSReleaseValue+3)
}

func FuzzParseOSRelease(f *testing.F) {
	f.Add([]byte("ID=debian\nID_LIKE=\"ubuntu debian\"\nVERSION_ID=\"24.04\"\n"))
	f.Add([]byte("ID=\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, like, ver := parseOSRelease(b)
		for _, v := range []string{id, like, ver} {
			if !printableASCII(v) && !strings.HasSuffix(v, "…") {
				t.Fatalf("unprintable %q", v)
			}
		}
	})
}
