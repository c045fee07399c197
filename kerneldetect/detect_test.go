package kerneldetect

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/sys"
)

func TestDetectFSNil(t *testing.T) {
	t.Parallel()
	r, err := DetectFS(nil)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Nil(t, r)
}

func TestDetectFSEmptyTree(t *testing.T) {
	t.Parallel()
	r, err := DetectFS(fstest.MapFS{})
	require.NoError(t, err)
	assert.Equal(t, Unknown, r.Kind)
	assert.False(t, r.RTCapable())
	require.Len(t, r.Checks, len(CheckIDs))
	for _, c := range r.Checks {
		assert.NotEqual(t, StatusFail, c.Status, "%s: nothing known is no proof of failure", c.ID)
		assert.NotEmpty(t, c.Evidence, c.ID)
	}
	assert.Contains(t, evidenceText(r), "proc/sys/kernel/osrelease: missing")
	assert.Equal(t, -1, r.Process.UID)
}

func evidenceText(r *Report) string {
	var sb strings.Builder
	for _, e := range r.Evidence {
		sb.WriteString(e.File + ": " + e.Value + " (" + e.Meaning + ")\n")
	}
	return sb.String()
}

// Garbled, empty and truncated files leave fields unknown with evidence.
func TestDetectFSBadInput(t *testing.T) {
	t.Parallel()
	huge := bytes.Repeat([]byte("x"), maxSmallFile+10)
	fsys := fstest.MapFS{
		"proc/sys/kernel/osrelease":           {Data: []byte("6.1.0-47-rt-amd64\n")},
		"proc/sys/kernel/version":             {Data: []byte("")},
		"proc/version":                        {Data: huge},
		"proc/config.gz":                      {Data: []byte("\x1f\x8bnot gzip")},
		"boot/config-6.1.0-47-rt-amd64":       {Data: []byte("CONFIG_PREEMPT_RT=y\n")},
		"proc/self/status":                    {Data: []byte("CapEff:\tnothex\n")},
		"proc/self/limits":                    {Data: []byte("garbage\n")},
		"sys/devices/system/cpu/online":       {Data: []byte("0-\n")},
		"sys/devices/system/cpu/isolated":     {Data: []byte("")},
		"sys/kernel/debug/sched/preempt":      {Data: []byte("none voluntary full")},
		"proc/sys/kernel/sched_rt_runtime_us": {Data: []byte("abc")},
		"sys/devices/system/clocksource/clocksource0/current_clocksource": {Data: []byte("hpet\n")},
	}
	r, err := DetectFS(fsys)
	require.NoError(t, err)
	ev := evidenceText(r)
	assert.Contains(t, ev, "proc/version: truncated")
	assert.Contains(t, ev, "proc/config.gz: unreadable")
	assert.Contains(t, ev, "sys/devices/system/cpu/online: 0- (online CPUs garbled")
	assert.Contains(t, ev, "proc/self/status: unreadable: CapEff")
	assert.Contains(t, ev, "proc/self/limits: unreadable: no limits")
	// The config from /boot still says PREEMPT_RT.
	assert.Equal(t, PreemptRT, r.Kind)
	assert.Equal(t, "boot/config-6.1.0-47-rt-amd64", r.ConfigSource)
	assert.Nil(t, r.OnlineCPUs)
	assert.False(t, r.Process.CapEffKnown)
	c, ok := r.Check(CheckSchedFIFO)
	require.True(t, ok)
	assert.Equal(t, StatusWarn, c.Status, "unknown is warn, not fail")
	c, _ = r.Check(CheckRTThrottling)
	assert.Equal(t, StatusWarn, c.Status)
	c, _ = r.Check(CheckClocksource)
	assert.Equal(t, StatusWarn, c.Status)
	assert.Contains(t, c.Remedy, "clocksource=tsc")
}

// A release with path elements must not escape into other files.
func TestDetectFSReleasePathTraversal(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"proc/sys/kernel/osrelease": {Data: []byte("../../etc/passwd\n")},
		"etc/passwd":                {Data: []byte("CONFIG_PREEMPT_RT=y\n")},
	}
	r, err := DetectFS(fsys)
	require.NoError(t, err)
	assert.Empty(t, r.ConfigSource)
	assert.Equal(t, Vanilla, r.Kind)
}

func TestKindNames(t *testing.T) {
	t.Parallel()
	for k, name := range map[Kind]string{Unknown: "unknown", Vanilla: "vanilla", Preempt: "preempt", PreemptRT: "preempt-rt", Xenomai: "xenomai", RTAI: "rtai"} {
		assert.Equal(t, name, k.String())
		b, err := k.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, name, string(b))
		var back Kind
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, k, back)
	}
	assert.Equal(t, "Kind(42)", Kind(42).String())
	assert.Equal(t, "Kind(-1)", Kind(-1).String())
	_, err := Kind(42).MarshalText()
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = ParseKind("rt")
	assert.ErrorIs(t, err, ErrInvalid)
	var k Kind
	assert.ErrorIs(t, k.UnmarshalText([]byte("PREEMPT_RT")), ErrInvalid)
	assert.ErrorIs(t, json.Unmarshal([]byte(`"bogus"`), &k), ErrInvalid)
	assert.True(t, PreemptRT.IsRealtime())
	assert.False(t, Preempt.IsRealtime())
}

func TestReportCheckMisuse(t *testing.T) {
	t.Parallel()
	var r *Report
	_, ok := r.Check(CheckSchedFIFO)
	assert.False(t, ok)
	assert.False(t, r.RTCapable())
	r = &Report{Kind: PreemptRT, Checks: []Check{{ID: CheckSMT, Status: StatusWarn}}}
	_, ok = r.Check("no-such-check")
	assert.False(t, ok)
	assert.True(t, r.RTCapable(), "warnings do not make a machine incapable")
	r.Checks = append(r.Checks, Check{ID: CheckSchedFIFO, Status: StatusFail})
	assert.False(t, r.RTCapable())
	assert.False(t, Process{}.HasCap(CapSysNice), "unknown caps are not held")
	assert.False(t, Process{CapEffKnown: true, CapEff: ^uint64(0)}.HasCap(64))
}

func TestDetectLive(t *testing.T) {
	t.Parallel()
	r, err := Detect()
	require.NoError(t, err)
	assert.NotEqual(t, Unknown, r.Kind, "a Linux host has /proc")
	assert.NotEmpty(t, r.Uname.Release)
	assert.NotEmpty(t, r.OnlineCPUs)
	assert.True(t, r.Process.CapEffKnown)
	assert.Equal(t, os.Getuid(), r.Process.UID)
	require.Len(t, r.Checks, len(CheckIDs))
	// What the files say must agree with what the kernel does: a process
	// that can set SCHED_FIFO is not told it cannot. (Root is not enough:
	// root without CAP_SYS_NICE, as in many containers, cannot.)
	if sys.ProbeSchedFIFO() == nil {
		c, _ := r.Check(CheckSchedFIFO)
		assert.NotEqual(t, StatusFail, c.Status, "SCHED_FIFO can be set: %s", c.Evidence)
	}
	t.Logf("live: kind %s, preempt %+v", r.Kind, r.Preempt)
}
