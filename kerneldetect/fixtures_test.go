package kerneldetect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixture is what one testdata tree must produce, field by field. Checks
// not listed in checks must be ok.
type fixture struct {
	tree     string
	kind     Kind
	release  string
	preempt  PreemptInfo
	realtime bool
	xenomai  *XenomaiInfo
	rtai     *RTAIInfo
	config   string
	online   []int
	isolated []int
	nohz     []int
	capKnown bool
	uid      int
	rtprio   int64
	checks   map[string]Status
}

var fixtures = []fixture{
	{
		tree: "container-rt-no-budget", kind: Vanilla, release: "6.18.44-fc-v782",
		preempt: PreemptInfo{Model: "none", Dynamic: true, Mode: "none", Source: "proc/config.gz"}, realtime: false,
		xenomai: nil, rtai: nil, config: "proc/config.gz",
		online: []int{0, 1}, isolated: nil, nohz: nil,
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "rt_group_sched": StatusFail, "isolated_cpus": StatusWarn, "nohz_full": StatusWarn, "hypervisor": StatusWarn},
	},
	{
		tree: "debian-6.1-isolcpus-nohz", kind: Vanilla, release: "6.1.0-47-amd64",
		preempt: PreemptInfo{Model: "voluntary", Dynamic: true, Mode: "voluntary", Source: "sys/kernel/debug/sched/preempt"}, realtime: false,
		xenomai: nil, rtai: nil, config: "boot/config-6.1.0-47-amd64",
		online: []int{0, 1, 2, 3}, isolated: nil, nohz: []int{2, 3},
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "isolated_cpus": StatusWarn, "cpufreq_governor": StatusWarn, "smt": StatusWarn},
	},
	{
		tree: "debian-6.1-rt", kind: PreemptRT, release: "6.1.0-47-rt-amd64",
		preempt: PreemptInfo{Model: "rt", Dynamic: false, Mode: "", Source: "boot/config-6.1.0-47-rt-amd64"}, realtime: true,
		xenomai: nil, rtai: nil, config: "boot/config-6.1.0-47-rt-amd64",
		online: []int{0, 1, 2, 3}, isolated: []int{2, 3}, nohz: []int{2, 3},
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"smt": StatusWarn},
	},
	{
		tree: "debian-6.1-voluntary", kind: Vanilla, release: "6.1.0-47-amd64",
		preempt: PreemptInfo{Model: "voluntary", Dynamic: true, Mode: "voluntary", Source: "sys/kernel/debug/sched/preempt"}, realtime: false,
		xenomai: nil, rtai: nil, config: "boot/config-6.1.0-47-amd64",
		online: []int{0, 1, 2, 3}, isolated: nil, nohz: nil,
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "isolated_cpus": StatusWarn, "nohz_full": StatusWarn, "cpufreq_governor": StatusWarn, "smt": StatusWarn},
	},
	{
		tree: "evl", kind: Xenomai, release: "6.6.21-evl",
		preempt: PreemptInfo{Model: "", Dynamic: true, Mode: ""}, realtime: false,
		xenomai: &XenomaiInfo{Version: "4", Core: "evl", Pipeline: "dovetail", ABI: "32", AllowedGroup: ""}, rtai: nil, config: "",
		online: []int{0, 1, 2, 3}, isolated: []int{1, 2, 3}, nohz: nil,
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "nohz_full": StatusWarn, "hrtimers": StatusWarn, "hz": StatusWarn},
	},
	{
		tree: "mainline-6.12-rt", kind: PreemptRT, release: "6.12.117+deb12-rt-amd64",
		preempt: PreemptInfo{Model: "rt", Dynamic: true, Mode: "", Source: "boot/config-6.12.117+deb12-rt-amd64"}, realtime: false,
		xenomai: nil, rtai: nil, config: "boot/config-6.12.117+deb12-rt-amd64",
		online: []int{0, 1, 2, 3}, isolated: nil, nohz: nil,
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "isolated_cpus": StatusWarn, "nohz_full": StatusWarn, "cpufreq_governor": StatusWarn},
	},
	{
		tree: "rpi-6.1-preempt-full", kind: Preempt, release: "6.1.21-v8+",
		preempt: PreemptInfo{Model: "full", Dynamic: false, Mode: "", Source: "proc/sys/kernel/version"}, realtime: false,
		xenomai: nil, rtai: nil, config: "",
		online: []int{0, 1, 2, 3}, isolated: nil, nohz: nil,
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "isolated_cpus": StatusWarn, "nohz_full": StatusWarn, "cpufreq_governor": StatusWarn, "smt": StatusWarn, "hypervisor": StatusWarn, "hrtimers": StatusWarn, "hz": StatusWarn},
	},
	{
		tree: "rtai", kind: RTAI, release: "4.19.177-rtai",
		preempt: PreemptInfo{Model: "", Dynamic: false, Mode: ""}, realtime: false,
		xenomai: nil, rtai: &RTAIInfo{Version: ""}, config: "",
		online: []int{0, 1}, isolated: []int{1}, nohz: nil,
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "nohz_full": StatusWarn, "hrtimers": StatusWarn, "hz": StatusWarn},
	},
	{
		tree: "unprivileged-user", kind: Vanilla, release: "6.18.44-fc-v782",
		preempt: PreemptInfo{Model: "none", Dynamic: true, Mode: "none", Source: "proc/config.gz"}, realtime: false,
		xenomai: nil, rtai: nil, config: "proc/config.gz",
		online: []int{0, 1}, isolated: nil, nohz: nil,
		capKnown: true, uid: 65534, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "sched_fifo": StatusFail, "memlock": StatusWarn, "isolated_cpus": StatusWarn, "nohz_full": StatusWarn, "hypervisor": StatusWarn, "cpu_dma_latency": StatusWarn},
	},
	{
		tree: "vm-firecracker-6.18", kind: Vanilla, release: "6.18.44-fc-v782",
		preempt: PreemptInfo{Model: "none", Dynamic: true, Mode: "none", Source: "proc/config.gz"}, realtime: false,
		xenomai: nil, rtai: nil, config: "proc/config.gz",
		online: []int{0, 1}, isolated: nil, nohz: nil,
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "isolated_cpus": StatusWarn, "nohz_full": StatusWarn, "hypervisor": StatusWarn},
	},
	{
		tree: "vm-firecracker-6.18-preempt-full", kind: Preempt, release: "6.18.44-fc-v782",
		preempt: PreemptInfo{Model: "none", Dynamic: true, Mode: "full", Source: "proc/cmdline"}, realtime: false,
		xenomai: nil, rtai: nil, config: "proc/config.gz",
		online: []int{0, 1}, isolated: []int{1}, nohz: nil,
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "nohz_full": StatusWarn, "hypervisor": StatusWarn},
	},
	{
		tree: "xenomai3-dovetail", kind: Xenomai, release: "5.10.209-xenomai",
		preempt: PreemptInfo{Model: "voluntary", Dynamic: false, Mode: "", Source: "boot/config-5.10.209-xenomai"}, realtime: false,
		xenomai: &XenomaiInfo{Version: "3.2.4", Core: "cobalt", Pipeline: "dovetail", ABI: "", AllowedGroup: "1001"}, rtai: nil, config: "boot/config-5.10.209-xenomai",
		online: []int{0, 1}, isolated: nil, nohz: nil,
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "isolated_cpus": StatusWarn, "nohz_full": StatusWarn},
	},
	{
		tree: "xenomai3-ipipe", kind: Xenomai, release: "4.19.177-xenomai",
		preempt: PreemptInfo{Model: "", Dynamic: false, Mode: ""}, realtime: false,
		xenomai: &XenomaiInfo{Version: "3.1.2", Core: "cobalt", Pipeline: "ipipe", ABI: "", AllowedGroup: "-1"}, rtai: nil, config: "",
		online: []int{0, 1}, isolated: []int{1}, nohz: nil,
		capKnown: true, uid: 0, rtprio: 0,
		checks: map[string]Status{"tracefs": StatusWarn, "nohz_full": StatusWarn, "hrtimers": StatusWarn, "hz": StatusWarn},
	},
}

// fixtureEvidence holds the observations each tree must report.
var fixtureEvidence = map[string][]string{
	"container-rt-no-budget":   {"sys/fs/cgroup/cpu/docker/gortapi-fixture/cpu.rt_runtime_us=0", "SCHED_FIFO fails with EPERM even as root", "--cpu-rt-runtime"},
	"debian-6.1-isolcpus-nohz": {"isolates CPUs 2-3 from nohz,managed_irq only, not from the scheduler", "decides over preempt= and the config"},
	"vm-firecracker-6.18-preempt-full": {"proc/cmdline: preempt=full (boot-time preemption mode", "nohz_full=1 on the command line is ignored: CONFIG_NO_HZ_FULL is not set",
		"interrupt handlers forced into threads"},
	"debian-6.1-rt":        {"sys/kernel/realtime: 1", "proc/sys/kernel/version: PREEMPT_RT"},
	"debian-6.1-voluntary": {"sys/kernel/debug/sched/preempt: none (voluntary) full", "CONFIG_PREEMPT_DYNAMIC=y"},
	"evl":                  {"dev/evl/control: present", "sys/devices/virtual/evl/control/abi: 32"},
	"mainline-6.12-rt":     {"sys/kernel/realtime: missing", "CONFIG_PREEMPT_RT=y"},
	"rpi-6.1-preempt-full": {"proc/sys/kernel/version: PREEMPT", "kernel config unknown"},
	"rtai":                 {"proc/rtai/hal: present", "proc/modules: rtai_hal", "proc/sys/kernel/osrelease: 4.19.177-rtai"},
	"unprivileged-user":    {"CAP_SYS_NICE no", "setcap cap_sys_nice,cap_ipc_lock+ep", "uid 65534"},
	"vm-firecracker-6.18":  {"proc/cmdline: no preempt=", "proc/cpuinfo flags: hypervisor", "CONFIG_PREEMPT_DYNAMIC=y"},
	"xenomai3-dovetail":    {"CONFIG_DOVETAIL=y", "proc/xenomai/version: 3.2.4"},
	"xenomai3-ipipe":       {"proc/ipipe/version: 17", "sys/module/xenomai/parameters/allowed_group: -1"},
}

// fixtureBoot holds the boot-overridable settings some trees must report.
var fixtureBoot = map[string]struct {
	rcuNoCBs                  []int
	threadedIRQs, mitigations Setting
}{
	"debian-6.1-rt":            {[]int{2, 3}, Setting{"yes", "preempt"}, Setting{"auto", "boot/config-6.1.0-47-rt-amd64"}},
	"debian-6.1-isolcpus-nohz": {[]int{2, 3}, Setting{"no", "proc/cmdline"}, Setting{"auto", "boot/config-6.1.0-47-amd64"}},
	"vm-firecracker-6.18-preempt-full": {[]int{1}, Setting{"yes", "proc/cmdline"},
		Setting{"auto,no_guest_host,no_guest_guest", "proc/cmdline"}},
	"vm-firecracker-6.18": {nil, Setting{"no", "proc/cmdline"}, Setting{"auto,no_guest_host,no_guest_guest", "proc/cmdline"}},
}

func TestFixtureTrees(t *testing.T) {
	t.Parallel()
	dirs, err := os.ReadDir("testdata")
	require.NoError(t, err)
	var trees []string
	for _, d := range dirs {
		if d.IsDir() {
			trees = append(trees, d.Name())
		}
	}
	var covered []string
	for _, f := range fixtures {
		covered = append(covered, f.tree)
	}
	require.ElementsMatch(t, trees, covered, "every testdata tree must have a fixture entry and vice versa")

	for _, f := range fixtures {
		t.Run(f.tree, func(t *testing.T) {
			_, err := os.Stat(filepath.Join("testdata", f.tree, "README.md"))
			require.NoError(t, err, "each tree says where its values come from")

			r, err := DetectFS(os.DirFS(filepath.Join("testdata", f.tree)))
			require.NoError(t, err)
			assert.Equal(t, f.kind, r.Kind, "kind")
			assert.Equal(t, f.release, r.Uname.Release, "release")
			assert.NotEmpty(t, r.Uname.Version, "version")
			assert.True(t, strings.HasPrefix(r.Uname.Full, "Linux version "+f.release+" "), "proc/version %q", r.Uname.Full)
			assert.Equal(t, f.preempt, r.Preempt, "preempt")
			assert.Equal(t, f.realtime, r.Realtime, "realtime file")
			assert.Equal(t, f.xenomai, r.Xenomai, "xenomai")
			assert.Equal(t, f.rtai, r.RTAI, "rtai")
			assert.Equal(t, f.config, r.ConfigSource, "config source")
			assert.Equal(t, f.online, r.OnlineCPUs, "online")
			assert.Equal(t, f.isolated, r.IsolatedCPUs, "isolated")
			assert.Equal(t, f.nohz, r.NohzFull, "nohz_full")
			assert.Equal(t, f.capKnown, r.Process.CapEffKnown, "CapEff known")
			assert.Equal(t, f.uid, r.Process.UID, "uid")
			assert.True(t, r.Process.RTPrio.Known, "rtprio known")
			assert.Equal(t, f.rtprio, r.Process.RTPrio.Soft, "rtprio")

			require.Len(t, r.Checks, len(CheckIDs))
			for i, c := range r.Checks {
				assert.Equal(t, CheckIDs[i], c.ID, "check order")
				want, listed := f.checks[c.ID]
				if !listed {
					want = StatusOK
				}
				assert.Equal(t, want, c.Status, "check %s: %s", c.ID, c.Evidence)
				assert.NotEmpty(t, c.Evidence, "check %s has evidence", c.ID)
				if c.Status == StatusFail {
					assert.NotEmpty(t, c.Remedy, "failed check %s has a remedy", c.ID)
				}
			}
			var seen []string
			for _, e := range r.Evidence {
				seen = append(seen, e.File+": "+e.Value+" ("+e.Meaning+")")
			}
			for _, c := range r.Checks {
				seen = append(seen, c.Evidence+" "+c.Remedy)
			}
			all := strings.Join(seen, "\n")
			for _, want := range fixtureEvidence[f.tree] {
				assert.Contains(t, all, want)
			}
			assert.Equal(t, f.kind.IsRealtime() && !hasFail(r), r.RTCapable())
			if b, ok := fixtureBoot[f.tree]; ok {
				assert.Equal(t, b.rcuNoCBs, r.RCUNoCBs, "rcu_nocbs")
				assert.Equal(t, b.threadedIRQs, r.ThreadedIRQs, "threaded irqs")
				assert.Equal(t, b.mitigations, r.Mitigations, "mitigations")
			}

			// The report is plain data: it survives JSON.
			b, err := json.Marshal(r)
			require.NoError(t, err)
			var back Report
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, r.Kind, back.Kind)
			assert.Equal(t, r.Checks, back.Checks)
		})
	}
}

func hasFail(r *Report) bool {
	for _, c := range r.Checks {
		if c.Status == StatusFail {
			return true
		}
	}
	return false
}
