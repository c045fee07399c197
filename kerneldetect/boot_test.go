package kerneldetect

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const bootRelease = "6.18.0-test"

// bootTree is a kernel whose config and command line a test chooses; the
// config is read from boot/config-<release>. extra adds or replaces files.
func bootTree(version, config, cmdline string, extra map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{
		"proc/sys/kernel/osrelease":       {Data: []byte(bootRelease + "\n")},
		"proc/sys/kernel/version":         {Data: []byte(version + "\n")},
		"proc/cmdline":                    {Data: []byte(cmdline + "\n")},
		"boot/config-" + bootRelease:      {Data: []byte(config)},
		"sys/devices/system/cpu/online":   {Data: []byte("0-3\n")},
		"sys/devices/system/cpu/isolated": {Data: []byte("\n")},
	}
	for name, data := range extra {
		if data == "" {
			delete(fsys, name)
			continue
		}
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

const (
	dynamicNone = "CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_NONE=y\nCONFIG_HIGH_RES_TIMERS=y\n"
	dynamicRT   = "CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT=y\nCONFIG_HIGH_RES_TIMERS=y\n"
	fixedFull   = "CONFIG_PREEMPT=y\nCONFIG_HIGH_RES_TIMERS=y\n"
	debugfsFile = "sys/kernel/debug/sched/preempt"
)

// The effective preemption model and the evidence that decided it:
// debugfs (the current mode) > preempt= on the command line > the config's
// default; preempt= means nothing to a kernel without PREEMPT_DYNAMIC, and
// PREEMPT_RT stays rt whatever mode it runs in.
func TestPreemptEffectiveAndSource(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, version, config, cmdline string
		extra                          map[string]string
		want                           PreemptInfo
		effective                      string
		kind                           Kind
	}{
		{"dynamic, none by config, full at boot", "#1 SMP PREEMPT_DYNAMIC", dynamicNone, "ro preempt=full quiet", nil,
			PreemptInfo{Model: "none", Dynamic: true, Mode: "full", Source: "proc/cmdline"}, "full", Preempt},
		{"debugfs wins over the command line", "#1 SMP PREEMPT_DYNAMIC", dynamicNone, "preempt=full",
			map[string]string{debugfsFile: "none (voluntary) full lazy\n"},
			PreemptInfo{Model: "none", Dynamic: true, Mode: "voluntary", Source: debugfsFile}, "voluntary", Vanilla},
		{"no preempt=: the config's default", "#1 SMP PREEMPT_DYNAMIC", dynamicNone, "ro quiet", nil,
			PreemptInfo{Model: "none", Dynamic: true, Mode: "none", Source: "boot/config-" + bootRelease}, "none", Vanilla},
		{"unknown preempt= keeps the default", "#1 SMP PREEMPT_DYNAMIC", dynamicNone, "preempt=fastest", nil,
			PreemptInfo{Model: "none", Dynamic: true, Mode: "none", Source: "boot/config-" + bootRelease}, "none", Vanilla},
		{"last preempt= wins, quotes removed", "#1 SMP PREEMPT_DYNAMIC", dynamicNone, `preempt=none "preempt=lazy"`, nil,
			PreemptInfo{Model: "none", Dynamic: true, Mode: "lazy", Source: "proc/cmdline"}, "lazy", Preempt},
		{"preempt= after -- belongs to init", "#1 SMP PREEMPT_DYNAMIC", dynamicNone, "ro -- preempt=full", nil,
			PreemptInfo{Model: "none", Dynamic: true, Mode: "none", Source: "boot/config-" + bootRelease}, "none", Vanilla},
		{"not dynamic: preempt= is ignored", "#1 SMP PREEMPT", fixedFull, "preempt=none", nil,
			PreemptInfo{Model: "full", Dynamic: false, Mode: "", Source: "boot/config-" + bootRelease}, "full", Preempt},
		{"PREEMPT_RT stays rt in lazy mode", "#1 SMP PREEMPT_RT", dynamicRT, "preempt=lazy", nil,
			PreemptInfo{Model: "rt", Dynamic: true, Mode: "lazy", Source: "boot/config-" + bootRelease}, "rt", PreemptRT},
		{"no config: the version string", "#1 SMP PREEMPT", "", "ro", map[string]string{"boot/config-" + bootRelease: ""},
			PreemptInfo{Model: "full", Dynamic: false, Mode: "", Source: "proc/sys/kernel/version"}, "full", Preempt},
		{"no config, dynamic: the command line", "#1 SMP PREEMPT_DYNAMIC", "", "preempt=full", map[string]string{"boot/config-" + bootRelease: ""},
			PreemptInfo{Model: "", Dynamic: true, Mode: "full", Source: "proc/cmdline"}, "full", Preempt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DetectFS(bootTree(tc.version, tc.config, tc.cmdline, tc.extra))
			require.NoError(t, err)
			assert.Equal(t, tc.want, r.Preempt)
			assert.Equal(t, tc.effective, r.Preempt.Effective())
			assert.Equal(t, tc.kind, r.Kind)
		})
	}
}

const (
	noHzFull   = "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\nCONFIG_IRQ_FORCED_THREADING=y\nCONFIG_CPU_MITIGATIONS=y\n"
	tickful    = "CONFIG_PREEMPT_VOLUNTARY=y\n# CONFIG_NO_HZ_FULL is not set\nCONFIG_RCU_NOCB_CPU=y\n# CONFIG_IRQ_FORCED_THREADING is not set\n# CONFIG_CPU_MITIGATIONS is not set\n"
	isolFile   = "sys/devices/system/cpu/isolated"
	nohzFile   = "sys/devices/system/cpu/nohz_full"
	volVersion = "#1 SMP"
)

// isolcpus= flags change what is isolated: with flags, domain (scheduler)
// isolation happens only when named.
func TestIsolcpusFlags(t *testing.T) {
	t.Parallel()
	// Flags without domain: sysfs rightly shows nothing isolated, and the
	// check says why instead of guessing.
	r, err := DetectFS(bootTree(volVersion, noHzFull, "isolcpus=managed_irq,nohz,2-3", map[string]string{nohzFile: "2-3\n"}))
	require.NoError(t, err)
	assert.Nil(t, r.IsolatedCPUs)
	c, _ := r.Check(CheckIsolatedCPUs)
	assert.Equal(t, StatusWarn, c.Status)
	assert.Contains(t, c.Evidence, "isolcpus=managed_irq,nohz,2-3 isolates CPUs 2-3 from nohz,managed_irq only, not from the scheduler")
	assert.Contains(t, c.Remedy, "isolcpus=domain,managed_irq,nohz,2-3")
	assert.Equal(t, []int{2, 3}, r.NohzFull)
	assert.Equal(t, []int{2, 3}, r.RCUNoCBs, "nohz_full implies rcu_nocbs")

	// sysfs unreadable: the command line's domain isolation stands in.
	r, err = DetectFS(bootTree(volVersion, noHzFull, "isolcpus=managed_irq,domain,2-3", map[string]string{isolFile: ""}))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, r.IsolatedCPUs)
	c, _ = r.Check(CheckIsolatedCPUs)
	assert.Equal(t, StatusOK, c.Status, c.Evidence)

	// isolcpus=nohz,… counts as nohz_full where sysfs cannot say.
	r, err = DetectFS(bootTree(volVersion, noHzFull, "isolcpus=nohz,domain,1-2 nohz-full=3", nil))
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, r.NohzFull)
}

// nohz_full= and rcu_nocbs= mean nothing to a kernel built without them.
func TestBootParamsIgnoredByConfig(t *testing.T) {
	t.Parallel()
	r, err := DetectFS(bootTree(volVersion, tickful, "nohz_full=2-3 rcu_nocbs=2-3 threadirqs", nil))
	require.NoError(t, err)
	assert.Nil(t, r.NohzFull)
	c, _ := r.Check(CheckNohzFull)
	assert.Equal(t, StatusWarn, c.Status)
	assert.Contains(t, c.Evidence, "nohz_full=2-3 on the command line is ignored: CONFIG_NO_HZ_FULL is not set")
	assert.Equal(t, []int{2, 3}, r.RCUNoCBs, "CONFIG_RCU_NOCB_CPU=y honours rcu_nocbs=")
	assert.Equal(t, Setting{Value: "no", Source: "boot/config-" + bootRelease}, r.ThreadedIRQs)
	assert.Equal(t, Setting{Value: "off", Source: "boot/config-" + bootRelease}, r.Mitigations)
}

func TestBootSettingsSources(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, version, config, cmdline string
		irqs, mitigations              Setting
		rcu                            []int
	}{
		{"defaults", volVersion, noHzFull, "ro quiet",
			Setting{"no", "proc/cmdline"}, Setting{"auto", "boot/config-" + bootRelease}, nil},
		{"threadirqs, mitigations=off, rcu-nocbs", volVersion, noHzFull, "threadirqs mitigations=off rcu-nocbs=0,N",
			Setting{"yes", "proc/cmdline"}, Setting{"off", "proc/cmdline"}, []int{0, 3}},
		{"unsupported mitigations= keeps the default", volVersion, noHzFull, "mitigations=fast",
			Setting{"no", "proc/cmdline"}, Setting{"auto", "boot/config-" + bootRelease}, nil},
		{"auto,nosmt", volVersion, noHzFull, "mitigations=auto,nosmt rcu_nocbs=all",
			Setting{"no", "proc/cmdline"}, Setting{"auto,nosmt", "proc/cmdline"}, []int{0, 1, 2, 3}},
		{"PREEMPT_RT threads its interrupts", "#1 SMP PREEMPT_RT", "CONFIG_PREEMPT_RT=y\n", "ro",
			Setting{"yes", "preempt"}, Setting{"auto", "boot/config-" + bootRelease}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DetectFS(bootTree(tc.version, tc.config, tc.cmdline, nil))
			require.NoError(t, err)
			assert.Equal(t, tc.irqs, r.ThreadedIRQs)
			assert.Equal(t, tc.mitigations, r.Mitigations)
			assert.Equal(t, tc.rcu, r.RCUNoCBs)
		})
	}
}

// Without sysfs's smt/active, nosmt on the command line is the evidence.
func TestSMTFromCmdline(t *testing.T) {
	t.Parallel()
	for _, cmdline := range []string{"nosmt", "mitigations=auto,nosmt"} {
		r, err := DetectFS(bootTree(volVersion, noHzFull, cmdline, nil))
		require.NoError(t, err)
		c, _ := r.Check(CheckSMT)
		assert.Equal(t, StatusOK, c.Status, cmdline)
		assert.Contains(t, c.Evidence, "SMT disabled at boot")
	}
}

func TestCmdlineParams(t *testing.T) {
	t.Parallel()
	got := cmdlineParams(`ro "quoted param" nohz-full=2 "preempt=full" x="a b" bare= -- init=1`)
	assert.Equal(t, []cmdParam{
		{name: "ro"}, {name: "quoted param"}, {name: "nohz_full", value: "2", hasValue: true},
		{name: "preempt", value: "full", hasValue: true}, {name: "x", value: "a b", hasValue: true},
		{name: "bare", hasValue: true},
	}, got)
	v, ok := cmdlineValue("rcu-nocbs=1 rcu_nocbs=2", "rcu_nocbs")
	assert.True(t, ok)
	assert.Equal(t, "2", v)
}

func TestParseCmdlineCPUList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		nr   int
		want []int
		bad  bool
	}{
		{"2-3", 4, []int{2, 3}, false},
		{"0,N", 8, []int{0, 7}, false},
		{"all", 3, []int{0, 1, 2}, false},
		{"0-9:2/5", 16, []int{0, 1, 5, 6}, false},
		{"1-2,1", 0, []int{1, 2}, false},
		{"N", 0, nil, true},
		{"all", 0, nil, true},
		{"0-3:3/2", 4, nil, true},
		{"0-3:0/2", 4, nil, true},
		{"3-1", 4, nil, true},
		{"0-70000", 4, nil, true},
		{"x", 4, nil, true},
	} {
		got, err := parseCmdlineCPUList(tc.in, tc.nr)
		if tc.bad {
			assert.ErrorIs(t, err, errParse, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestParseIsolcpus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, flags string
		cpus      []int
		unknown   []string
	}{
		{"2-3", "domain", []int{2, 3}, nil},
		{"managed_irq,domain,2-3", "domain,managed_irq", []int{2, 3}, nil},
		{"nohz,2-3", "nohz", []int{2, 3}, nil},
		{"managed_irq,2", "managed_irq", []int{2}, nil},
		{"future,2", "domain", []int{2}, []string{"future"}},
		{"domain,N", "domain", []int{3}, nil},
	} {
		iso, err := parseIsolcpus(tc.in, 4)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.flags, iso.flags(), tc.in)
		assert.Equal(t, tc.cpus, iso.cpus, tc.in)
		assert.Equal(t, tc.unknown, iso.unknown, tc.in)
	}
	_, err := parseIsolcpus("domain,2-", 4)
	assert.ErrorIs(t, err, errParse)
}
