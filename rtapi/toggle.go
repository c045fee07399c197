package rtapi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gortapi/gortapi/internal/backend"
)

// Toggle is a yes/no setting that can also be unset: Auto, the zero value,
// leaves the choice to the flag, the environment, then the default (each
// field says what its Auto means), so an explicit Off can beat them.
type Toggle int8

// Toggle values.
const (
	Auto Toggle = 0
	On   Toggle = 1
	Off  Toggle = -1
)

// String gives "auto", "on", "off" or "Toggle(n)"; Set reads it back.
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

// Set parses "auto" (or ""), "on", "off", strconv.ParseBool's spellings
// and yes/no, in any case, making *Toggle a flag.Value. Anything else is
// ErrInvalid and leaves t as it was.
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

// WakeMode is how a periodic task's thread is woken for each release
// (docs/BENCHMARKS.md compares them).
type WakeMode uint8

// Wake modes.
const (
	// WakeAuto lets the flavor choose: nanosleep, or posix-timer on the
	// posix flavor with VanillaFIFO.
	WakeAuto WakeMode = iota
	// WakeNanosleep: an absolute sleep to each deadline (LinuxCNC,
	// cyclictest's default), as a futex wait that Stop and Pause can end.
	WakeNanosleep
	// WakeTimerfd: a periodic timer read through a timerfd (Xenomai's latency).
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

// backend is m as the flavor takes it (TestWakeModesMatchBackend).
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
	// Degraded says why the flavor carried on without what it wanted
	// (SCHED_FIFO refused without Strict); empty when it did not.
	Degraded string
}

// publicBinding is b as Task.Binding reports it; zero before Bind.
func publicBinding(b backend.Binding) Binding {
	if b.Tid == 0 && !b.Virtual {
		return Binding{}
	}
	return Binding{Tid: b.Tid, Policy: policyName(b), Priority: b.Priority,
		CPUs: slices.Clone(b.CPUs), Wake: WakeMode(b.Wake), Degraded: b.Degraded}
}
