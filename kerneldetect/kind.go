package kerneldetect

import "fmt"

// Kind is the kind of kernel real-time support a machine has. It
// corresponds to rtapi_get_realtime_type in LinuxCNC's uspace RTAPI.
type Kind int

// Kinds, from no real-time support to dual-kernel systems.
const (
	// Unknown means nothing could be read about the kernel (no uname).
	Unknown Kind = iota
	// Vanilla is a kernel without full preemption (none or voluntary).
	Vanilla
	// Preempt is a fully preemptible kernel (CONFIG_PREEMPT, or a
	// PREEMPT_DYNAMIC kernel in full or lazy mode) without PREEMPT_RT.
	Preempt
	// PreemptRT is a PREEMPT_RT kernel.
	PreemptRT
	// Xenomai is a Xenomai dual kernel: 3 (Cobalt) or 4 (EVL).
	Xenomai
	// RTAI is an RTAI dual kernel.
	RTAI
)

var kindNames = [...]string{
	Unknown:   "unknown",
	Vanilla:   "vanilla",
	Preempt:   "preempt",
	PreemptRT: "preempt-rt",
	Xenomai:   "xenomai",
	RTAI:      "rtai",
}

// String returns the stable name of k: "unknown", "vanilla", "preempt",
// "preempt-rt", "xenomai" or "rtai".
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// IsRealtime reports whether k is a hard real-time kernel: PREEMPT_RT,
// Xenomai or RTAI.
func (k Kind) IsRealtime() bool { return k == PreemptRT || k == Xenomai || k == RTAI }

// ParseKind returns the Kind named s (as String returns it); unknown names
// give an error matching ErrInvalid.
func ParseKind(s string) (Kind, error) {
	for k, name := range kindNames {
		if name == s {
			return Kind(k), nil
		}
	}
	return Unknown, fmt.Errorf("parse kind %q: %w", s, ErrInvalid)
}

// MarshalText encodes k as its String name. Out-of-range values are an
// error matching ErrInvalid.
func (k Kind) MarshalText() ([]byte, error) {
	if k < 0 || int(k) >= len(kindNames) {
		return nil, fmt.Errorf("marshal kind %d: %w", int(k), ErrInvalid)
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText decodes a name written by MarshalText.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Status is the verdict of one readiness check.
type Status string

// Check verdicts.
const (
	// StatusOK: nothing to do.
	StatusOK Status = "ok"
	// StatusWarn: real-time threads work, but latency or robustness
	// suffers, or the input could not be read.
	StatusWarn Status = "warn"
	// StatusFail: real-time threads will not work as they are.
	StatusFail Status = "fail"
)

// Preemption models, as Report.Preempt.Model and Mode spell them.
const (
	ModelNone      = "none"
	ModelVoluntary = "voluntary"
	ModelFull      = "full"
	ModelLazy      = "lazy"
	ModelRT        = "rt"
)

// Check ids. They are stable: rtapi and rtcheck refer to them.
const (
	CheckSchedFIFO       = "sched_fifo"
	CheckMemlock         = "memlock"
	CheckRTThrottling    = "rt_throttling"
	CheckRTGroupSched    = "rt_group_sched"
	CheckIsolatedCPUs    = "isolated_cpus"
	CheckNohzFull        = "nohz_full"
	CheckCPUFreqGovernor = "cpufreq_governor"
	CheckSMT             = "smt"
	CheckHypervisor      = "hypervisor"
	CheckClocksource     = "clocksource"
	CheckHRTimers        = "hrtimers"
	CheckHZ              = "hz"
	CheckCPUDMALatency   = "cpu_dma_latency"
	// CheckTracefs: the kernel's trace is writable, for rtapi's trace
	// hook (TaskSpec.TraceMark, latency-test -b). A warning only: the
	// hook is optional.
	CheckTracefs = "tracefs"
)

// CheckIDs lists every check id in the order Report.Checks holds them.
var CheckIDs = []string{
	CheckSchedFIFO, CheckMemlock, CheckRTThrottling, CheckRTGroupSched,
	CheckIsolatedCPUs, CheckNohzFull, CheckCPUFreqGovernor, CheckSMT,
	CheckHypervisor, CheckClocksource, CheckHRTimers, CheckHZ,
	CheckCPUDMALatency, CheckTracefs,
}
