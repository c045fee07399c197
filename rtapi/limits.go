package rtapi

import (
	"time"

	"github.com/gortapi/gortapi/internal/backend"
)

// Defaults of settings left zero, and bounds of what they take.
const (
	// DefaultHistogramBound is Options.HistogramBound's default.
	DefaultHistogramBound = 10 * time.Millisecond
	// DefaultStopTimeout is Options.StopTimeout's default.
	DefaultStopTimeout = 2 * time.Second
	// DefaultTimerSignal is the signal the posix-timer wake mode uses
	// unless Options.TimerSignal names another: 40, SIGRTMIN+6 in glibc's
	// numbering.
	DefaultTimerSignal = backend.DefaultTimerSignal
	// DefaultStackPrefault is the stack grown before a task's first cycle.
	DefaultStackPrefault = 64 << 10
	// A task's watchdog timeout is TaskSpec.Watchdog, or
	// DefaultWatchdogPeriods periods plus DefaultWatchdogSlack. The slack
	// covers a healthy task held off its CPU by the machine (host steal,
	// SMIs), which a false positive would demote.
	DefaultWatchdogPeriods = 5
	DefaultWatchdogSlack   = 50 * time.Millisecond

	// MaxPeriod bounds TaskSpec's Period, Watchdog and LateThreshold;
	// MaxStackPrefault its StackPrefault. Larger values are ErrInvalid.
	// They keep deadline arithmetic far from overflowing int64 ns.
	MaxPeriod        = 24 * time.Hour
	MaxStackPrefault = 64 << 20
	// DelayMax is the longest busy wait Delay performs (rtapi_delay_max):
	// longer waits belong in a sleep, not a spin.
	DelayMax = 10 * time.Microsecond
	// PLLMaxCorrection is the largest correction SetPLLCorrection
	// applies, as a fraction of the period (LinuxCNC clamps to 1 %).
	PLLMaxCorrection = 0.01
	// PolicyVirtual is Stats.Policy on the sim flavor.
	PolicyVirtual = "virtual"
)
