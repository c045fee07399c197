package rtapi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gortapi/gortapi/internal/backend"
)

// Toggle is a yes/no setting that can also say "not given": Auto, the
// zero value, leaves the choice to what comes next (a flag, then the
// environment, then a default or detection; each field says what its
// Auto means). A plain bool cannot tell "off" from "unset", so an
// explicit -rtapi.strict=false could not beat RTAPI_STRICT=1.
type Toggle int8

// Toggle values.
const (
	Auto Toggle = 0
	On   Toggle = 1
	Off  Toggle = -1
)

// String gives "auto", "on" or "off" (or "Toggle(n)" for a value that is
// none of them), the spelling Set reads back.
func (t Toggle) String() string {
	switch t {
	case Auto:
		return "auto"
	case On:
		return "on"
	case Off:
		return "off"
	}
	return fmt.Sprintf("Toggle(%d)", int8(t))
}

// Set parses "auto" (or ""), "on" or "off", and the spellings of
// strconv.ParseBool and yes/no, in any case. Anything else is an error
// matching ErrInvalid and t is left as it was. Set makes *Toggle a
// flag.Value.
func (t *Toggle) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		*t = Auto
	case "on", "1", "t", "true", "yes":
		*t = On
	case "off", "0", "f", "false", "no":
		*t = Off
	default:
		return fmt.Errorf("%q is not auto, on or off: %w", s, ErrInvalid)
	}
	return nil
}

// Valid reports whether t is Auto, On or Off.
func (t Toggle) Valid() bool { return t == Auto || t == On || t == Off }

// WakeMode is how a periodic task's thread is woken for each release.
// The modes differ in what a wake-up costs and in how late it comes on a
// kernel that is not real-time; examples/latency-bench measures them
// side by side.
type WakeMode uint8

// Wake modes.
const (
	// WakeAuto lets the flavor choose: nanosleep, or posix-timer on the
	// posix flavor with VanillaFIFO.
	WakeAuto WakeMode = iota
	// WakeNanosleep: an absolute sleep to each deadline (LinuxCNC,
	// cyclictest's default), a futex wait on the task's control word so
	// that Stop and Pause can end it.
	WakeNanosleep
	// WakeTimerfd: a periodic kernel timer read through a timerfd
	// (Xenomai's latency tool works this way).
	WakeTimerfd
	// WakePosixTimer: a periodic POSIX timer signalling the task's own
	// thread, collected with rt_sigtimedwait (cyclictest -x).
	WakePosixTimer
)

// String gives the name ParseWakeMode reads back.
func (m WakeMode) String() string { return m.backend().String() }

// ParseWakeMode parses "auto", "nanosleep", "timerfd" or "posix-timer".
func ParseWakeMode(s string) (WakeMode, error) {
	for m := WakeAuto; m <= WakePosixTimer; m++ {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown wake mode %q (valid: auto, nanosleep, timerfd, posix-timer): %w", s, ErrInvalid)
}

// backend is m as the flavor's ThreadSpec takes it; the numbering is the
// same (TestWakeModesMatchBackend).
func (m WakeMode) backend() backend.WakeMode { return backend.WakeMode(m) }

// Binding is what the flavor applied to a task's thread (Task.Binding).
type Binding struct {
	// Tid is the kernel thread id; 0 on the sim flavor.
	Tid int
	// Policy is the scheduling policy ("SCHED_FIFO", "SCHED_OTHER"), or
	// PolicyVirtual on the sim flavor.
	Policy string
	// Priority is 0 under SCHED_OTHER; the virtual one on the sim flavor.
	Priority int
	// CPUs is the thread's affinity; nil when unpinned.
	CPUs []int
	// Wake is the wake mode the flavor chose.
	Wake WakeMode
	// Degraded is non-empty when the flavor could not apply what it
	// wanted and carried on (SCHED_FIFO refused without Strict).
	Degraded string
}

// publicBinding is b as Task.Binding reports it, with its own CPUs: the
// zero Binding before Bind filled b in.
func publicBinding(b backend.Binding) Binding {
	if b.Tid == 0 && !b.Virtual {
		return Binding{}
	}
	return Binding{Tid: b.Tid, Policy: policyName(b), Priority: b.Priority,
		CPUs: slices.Clone(b.CPUs), Wake: WakeMode(b.Wake), Degraded: b.Degraded}
}
