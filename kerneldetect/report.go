package kerneldetect

// Report is what DetectFS found. Every conclusion is backed by entries in
// Evidence (and each Check carries its own). Unknown fields keep their
// zero value.
type Report struct {
	// Kind is the conclusion: vanilla, preempt, preempt-rt, xenomai, rtai.
	Kind Kind `json:"kind"`
	// Uname is the kernel identity read from /proc.
	Uname Uname `json:"uname"`
	// Preempt is the preemption model.
	Preempt PreemptInfo `json:"preempt"`
	// Realtime is true when /sys/kernel/realtime reads "1" (RT patch
	// kernels before mainline 6.12 only).
	Realtime bool `json:"realtime_file"`
	// Xenomai is set when a Xenomai core (Cobalt or EVL) is present.
	Xenomai *XenomaiInfo `json:"xenomai"`
	// RTAI is set when RTAI is present.
	RTAI *RTAIInfo `json:"rtai"`
	// ConfigSource names the kernel config read ("proc/config.gz",
	// "boot/config-<release>"), "" when none was readable.
	ConfigSource string `json:"config_source"`
	// OnlineCPUs, IsolatedCPUs and NohzFull are CPU numbers from
	// /sys/devices/system/cpu/{online,isolated,nohz_full}.
	OnlineCPUs   []int `json:"online_cpus"`
	IsolatedCPUs []int `json:"isolated_cpus"`
	NohzFull     []int `json:"nohz_full"`
	// RCUNoCBs are the CPUs whose RCU callbacks run in kthreads rather
	// than on the CPU itself: rcu_nocbs= and the nohz_full CPUs (which
	// imply it) on a kernel with CONFIG_RCU_NOCB_CPU=y, or every CPU with
	// CONFIG_RCU_NOCB_CPU_DEFAULT_ALL=y and no rcu_nocbs=. nil when none
	// or unknown (the evidence says which).
	RCUNoCBs []int `json:"rcu_nocbs"`
	// ThreadedIRQs is "yes" when interrupt handlers run in threads that a
	// real-time task can outrank: always under PREEMPT_RT, else with
	// threadirqs on the command line of a kernel built with
	// CONFIG_IRQ_FORCED_THREADING=y.
	ThreadedIRQs Setting `json:"threaded_irqs"`
	// Mitigations is the CPU vulnerability mitigation setting, "auto",
	// "auto,nosmt" or "off": mitigations= on the command line, else the
	// config's default (CONFIG_CPU_MITIGATIONS). Mitigations add
	// system-call and context-switch cost.
	Mitigations Setting `json:"mitigations"`
	// Distro is the distribution and architecture, when the tree tells
	// them.
	Distro Distro `json:"distro"`
	// Process describes the reading process: capabilities and limits.
	Process Process `json:"process"`
	// Checks are the readiness checks, in CheckIDs order.
	Checks []Check `json:"checks"`
	// Evidence is everything detection saw, in reading order.
	Evidence []Evidence `json:"evidence"`
}

// Uname is the kernel identity.
type Uname struct {
	// Release is /proc/sys/kernel/osrelease, e.g. "6.1.0-47-rt-amd64".
	Release string `json:"release"`
	// Version is /proc/sys/kernel/version, e.g.
	// "#1 SMP PREEMPT_RT Debian 6.1.170-3 (2026-05-08)".
	Version string `json:"version"`
	// Full is the first line of /proc/version.
	Full string `json:"full"`
}

// PreemptInfo is the kernel's preemption model.
type PreemptInfo struct {
	// Model is the build-time model: none, voluntary, full, lazy or rt
	// ("" when unknown). PREEMPT_RT wins over the model choice it is
	// built with.
	Model string `json:"model"`
	// Dynamic is true for a PREEMPT_DYNAMIC kernel, whose mode can be
	// chosen at boot (preempt=) or at run time (debugfs).
	Dynamic bool `json:"dynamic"`
	// Mode is the current mode of a dynamic kernel when it can be read
	// (/sys/kernel/debug/sched/preempt, else preempt= on the command line,
	// else the config's default when the command line has no preempt= or
	// one the kernel rejects); "" otherwise.
	Mode string `json:"mode"`
	// Source names the evidence that decided Effective(), best first:
	// "sys/kernel/debug/sched/preempt" (the mode now), "proc/cmdline"
	// (preempt= at boot), the config file (Report.ConfigSource: its
	// default), "proc/sys/kernel/version" (the version string's flags) or
	// "sys/kernel/realtime"; "" when the model is unknown.
	Source string `json:"source"`
}

// Effective returns the model the kernel runs with: rt for PREEMPT_RT
// (whatever its dynamic mode), else Mode when known, else Model.
func (p PreemptInfo) Effective() string {
	if p.Model == ModelRT {
		return ModelRT
	}
	if p.Mode != "" {
		return p.Mode
	}
	return p.Model
}

// Setting is a kernel setting whose build-time default a boot parameter
// can override: the value in effect and the evidence that decided it.
type Setting struct {
	// Value is the setting in effect ("" when unknown).
	Value string `json:"value"`
	// Source is what decided it: "proc/cmdline", the config file, or
	// "preempt" for what PREEMPT_RT forces.
	Source string `json:"source"`
}

// XenomaiInfo describes a Xenomai core.
type XenomaiInfo struct {
	// Version is /proc/xenomai/version for Cobalt ("3.2.4"), "4" for EVL.
	Version string `json:"version"`
	// Core is "cobalt" (Xenomai 3) or "evl" (Xenomai 4).
	Core string `json:"core"`
	// Pipeline is "ipipe" or "dovetail" ("" when unknown).
	Pipeline string `json:"pipeline"`
	// ABI is the EVL ABI level (/sys/devices/virtual/evl/control/abi).
	ABI string `json:"abi,omitempty"`
	// AllowedGroup is /sys/module/xenomai/parameters/allowed_group
	// (Cobalt): the group whose members may use the core; "-1" is none.
	AllowedGroup string `json:"allowed_group,omitempty"`
}

// RTAIInfo describes RTAI.
type RTAIInfo struct {
	// Version is /sys/module/rtai_hal/version when present, else "".
	Version string `json:"version"`
}

// Process is what /proc/self says about the reading process.
type Process struct {
	// CapEffKnown tells whether CapEff was read; CapEff is its bit mask.
	CapEffKnown bool   `json:"cap_eff_known"`
	CapEff      uint64 `json:"cap_eff"`
	// UID is the real user id (-1 when unknown).
	UID int `json:"uid"`
	// RTPrio and Memlock are RLIMIT_RTPRIO and RLIMIT_MEMLOCK.
	RTPrio  Limit `json:"rtprio"`
	Memlock Limit `json:"memlock"`
}

// Linux capability bit numbers used by the checks.
const (
	CapIPCLock = 14
	CapSysNice = 23
)

// HasCap reports whether capability bit c is known to be effective.
func (p Process) HasCap(c uint) bool { return p.CapEffKnown && c < 64 && p.CapEff&(1<<c) != 0 }

// Limit is a resource limit. Unlimited values are Unlimited (-1).
type Limit struct {
	Known bool  `json:"known"`
	Soft  int64 `json:"soft"`
	Hard  int64 `json:"hard"`
}

// Unlimited is the value of an "unlimited" limit.
const Unlimited int64 = -1

// Check is one readiness check.
type Check struct {
	// ID is one of the Check* constants.
	ID string `json:"id"`
	// Status is ok, warn or fail.
	Status Status `json:"status"`
	// Evidence says what the check saw: file and value.
	Evidence string `json:"evidence"`
	// Remedy is the concrete fix ("" when Status is ok).
	Remedy string `json:"remedy"`
}

// Evidence is one observation: the file read, the value seen and what it
// told detection. A file that was missing or garbled is evidence too.
type Evidence struct {
	File    string `json:"file"`
	Value   string `json:"value"`
	Meaning string `json:"meaning"`
}

// Check returns the check with the given id.
func (r *Report) Check(id string) (Check, bool) {
	if r == nil {
		return Check{}, false
	}
	for _, c := range r.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}

// RTCapable reports whether the machine can run hard real-time threads as
// read: the kernel is PREEMPT_RT, Xenomai or RTAI and no check failed.
// A live probe (the one flavors.Select makes, whose outcome
// rtapi.RT.Flavor().Why reports) is the final word on SCHED_FIFO; this is
// what the files say.
func (r *Report) RTCapable() bool {
	if r == nil || !r.Kind.IsRealtime() {
		return false
	}
	for _, c := range r.Checks {
		if c.Status == StatusFail {
			return false
		}
	}
	return true
}
