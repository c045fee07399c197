package kerneldetect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCPUList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"\n", nil, false},
		{"(null)\n", nil, false},
		{"0\n", []int{0}, false},
		{"0-3\n", []int{0, 1, 2, 3}, false},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}, false},
		{"3,1,1-2", []int{1, 2, 3}, false},
		{" 2 , 5 ", []int{2, 5}, false},
		{"3-1", nil, true},
		{"a", nil, true},
		{"1-", nil, true},
		{"-1", nil, true},
		{"0-4000000000", nil, true},
		{"0-65535,0-65535", nil, true},
		{"1,,2", nil, true},
	} {
		got, err := parseCPUList([]byte(tc.in))
		if tc.bad {
			assert.ErrorIs(t, err, errParse, "%q", tc.in)
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}

func TestFormatCPUList(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "", formatCPUList(nil))
	assert.Equal(t, "0-3,8,10-11", formatCPUList([]int{0, 1, 2, 3, 8, 10, 11}))
	assert.Equal(t, "5", formatCPUList([]int{5}))
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	st, err := parseStatus([]byte("Name:\tx\nUid:\t1000\t1000\t1000\t1000\nCapInh:\t0\nCapEff:\t0000000000800000\n"))
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<CapSysNice), st.capEff)
	assert.True(t, st.uidKnown)
	assert.Equal(t, 1000, st.uid)

	_, err = parseStatus([]byte("Name:\tx\n"))
	assert.ErrorIs(t, err, errParse)
	_, err = parseStatus([]byte("CapEff:\tzz\n"))
	assert.ErrorIs(t, err, errParse)
	_, err = parseStatus([]byte("Uid:\t\nCapEff:\t0\n"))
	assert.ErrorIs(t, err, errParse)
	_, err = parseStatus([]byte("CapEff:\t10000000000000000\n")) // 65 bits
	assert.ErrorIs(t, err, errParse)
}

func TestParseLimits(t *testing.T) {
	t.Parallel()
	in := "Limit                     Soft Limit           Hard Limit           Units     \n" +
		"Max locked memory         8388608              8388608              bytes     \n" +
		"Max realtime priority     0                    99                   \n" +
		"Max realtime timeout      unlimited            unlimited            us        \n"
	m, err := parseLimits([]byte(in))
	require.NoError(t, err)
	assert.Equal(t, Limit{Known: true, Soft: 8388608, Hard: 8388608}, m["Max locked memory"])
	assert.Equal(t, Limit{Known: true, Soft: 0, Hard: 99}, m["Max realtime priority"])
	assert.Equal(t, Limit{Known: true, Soft: Unlimited, Hard: Unlimited}, m["Max realtime timeout"])

	_, err = parseLimits([]byte("garbage\n"))
	assert.ErrorIs(t, err, errParse)
	_, err = parseLimits([]byte("Max locked memory  12\n"))
	assert.ErrorIs(t, err, errParse)
	_, err = parseLimits([]byte("Max locked memory  -5 -5 bytes\n"))
	assert.ErrorIs(t, err, errParse)
}

func TestParseVersionFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want versionFlags
	}{
		{"#1 SMP PREEMPT_DYNAMIC @0", versionFlags{dynamic: true}},
		{"#1 SMP PREEMPT_RT Debian 6.1.170-3 (2026-05-08)", versionFlags{rt: true}},
		{"#1 SMP PREEMPT RT Tue Jun 26 03:08:40 CEST 2012", versionFlags{rt: true}},
		{"#1642 SMP PREEMPT Mon Apr  3 17:24:16 BST 2023", versionFlags{preempt: true}},
		{"#1 SMP PREEMPT_LAZY Thu", versionFlags{lazy: true}},
		{"#1 SMP Debian 5.10.209-2 (2024-01-31)", versionFlags{}},
		{"", versionFlags{}},
		{"PREEMPT", versionFlags{preempt: true}},
	} {
		assert.Equal(t, tc.want, parseVersionFlags(tc.in), "%q", tc.in)
	}
}

func TestParseKconfig(t *testing.T) {
	t.Parallel()
	cfg, err := parseKconfig([]byte("#\n# comment\nCONFIG_HZ=250\nCONFIG_PREEMPT_RT=y\n# CONFIG_PREEMPT is not set\nCONFIG_CC_VERSION_TEXT=\"gcc 12\"\nCONFIG_=x\nCONFIG_BAD NAME=y\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"CONFIG_HZ": "250", "CONFIG_PREEMPT_RT": "y", "CONFIG_PREEMPT": "n", "CONFIG_CC_VERSION_TEXT": "gcc 12",
	}, cfg)
	_, err = parseKconfig([]byte("not a config"))
	assert.ErrorIs(t, err, errParse)
}

func TestConfigModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg     map[string]string
		model   string
		dynamic bool
	}{
		{map[string]string{"CONFIG_PREEMPT_NONE": "y", "CONFIG_PREEMPT_DYNAMIC": "y"}, ModelNone, true},
		{map[string]string{"CONFIG_PREEMPT_VOLUNTARY": "y"}, ModelVoluntary, false},
		{map[string]string{"CONFIG_PREEMPT": "y"}, ModelFull, false},
		{map[string]string{"CONFIG_PREEMPT_LAZY": "y", "CONFIG_PREEMPT": "n"}, ModelLazy, false},
		{map[string]string{"CONFIG_PREEMPT_RT": "y", "CONFIG_PREEMPT_LAZY": "y", "CONFIG_PREEMPT_DYNAMIC": "y"}, ModelRT, true},
		{map[string]string{}, "", false},
	} {
		m, d := configModel(tc.cfg)
		assert.Equal(t, tc.model, m, "%v", tc.cfg)
		assert.Equal(t, tc.dynamic, d, "%v", tc.cfg)
	}
}

func TestParsePreemptDebugfs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"none voluntary (full) lazy\n": ModelFull,
		"(none) voluntary full\n":      ModelNone,
		"none (voluntary) full":        ModelVoluntary,
		"full (lazy)":                  ModelLazy,
	} {
		got, err := parsePreemptDebugfs([]byte(in))
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, got)
	}
	for _, in := range []string{"", "none voluntary full", "(rt)", "()", "(("} {
		_, err := parsePreemptDebugfs([]byte(in))
		assert.ErrorIs(t, err, errParse, "%q", in)
	}
}

func TestCmdlineValue(t *testing.T) {
	t.Parallel()
	v, ok := cmdlineValue("ro preempt=voluntary quiet preempt=full", "preempt")
	assert.True(t, ok)
	assert.Equal(t, "full", v, "the last occurrence wins, as in the kernel")
	_, ok = cmdlineValue("ro quiet -- preempt=full", "preempt")
	assert.False(t, ok, "after -- the parameters belong to init")
	v, ok = cmdlineValue("isolcpus", "isolcpus")
	assert.True(t, ok)
	assert.Equal(t, "", v)
	_, ok = cmdlineValue("", "preempt")
	assert.False(t, ok)
}

func TestParseSingleInt(t *testing.T) {
	t.Parallel()
	n, err := parseSingleInt([]byte("950000\n"))
	require.NoError(t, err)
	assert.Equal(t, int64(950000), n)
	n, err = parseSingleInt([]byte("-1\n"))
	require.NoError(t, err)
	assert.Equal(t, int64(-1), n)
	_, err = parseSingleInt([]byte("\n"))
	assert.ErrorIs(t, err, errParse)
	_, err = parseSingleInt([]byte("95x"))
	assert.ErrorIs(t, err, errParse)
}

func TestCgroupV1Path(t *testing.T) {
	t.Parallel()
	p, ctl, ok := cgroupV1Path([]byte("4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n"), "cpu")
	assert.True(t, ok)
	assert.Equal(t, "/docker/abc", p)
	assert.Equal(t, "cpu,cpuacct", ctl)
	_, _, ok = cgroupV1Path([]byte("0::/user.slice\n"), "cpu")
	assert.False(t, ok)
	_, _, ok = cgroupV1Path([]byte("2:cpuacct:/\n"), "cpu")
	assert.False(t, ok, "cpuacct is not cpu")
}

func TestCpuinfoAndModules(t *testing.T) {
	t.Parallel()
	has, found := cpuinfoHasFlag([]byte("processor\t: 0\nflags\t\t: fpu hypervisor sse\n"), "hypervisor")
	assert.True(t, has)
	assert.True(t, found)
	has, found = cpuinfoHasFlag([]byte("Features\t: fp asimd\n"), "hypervisor")
	assert.False(t, has)
	assert.False(t, found)
	assert.True(t, modulesHas([]byte("rtai_hal 57344 2 - Live 0x0\n"), "rtai_hal"))
	assert.False(t, modulesHas([]byte("rtai_hal_x 1 0 - Live 0x0\n"), "rtai_hal"))
}
