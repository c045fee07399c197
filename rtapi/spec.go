package rtapi

import (
	"fmt"
	"math"
	"time"
)

// OverrunPolicy says what a periodic task does about releases that passed
// while its body ran.
type OverrunPolicy uint8

const (
	// CatchUp runs the missed cycles back to back without sleeping, so the
	// task keeps its cycle count (LinuxCNC's behaviour).
	CatchUp OverrunPolicy = iota
	// Skip drops the missed releases and waits for the next one on the
	// grid (cyclictest's behaviour).
	Skip
)

func (p OverrunPolicy) String() string {
	switch p {
	case CatchUp:
		return "catchup"
	case Skip:
		return "skip"
	}
	return fmt.Sprintf("overrun(%d)", uint8(p))
}

// ParseOverrunPolicy parses "catchup" or "skip".
func ParseOverrunPolicy(s string) (OverrunPolicy, error) {
	switch s {
	case "catchup", "catch-up":
		return CatchUp, nil
	case "skip":
		return Skip, nil
	}
	return 0, fmt.Errorf("unknown overrun policy %q (valid: catchup, skip): %w", s, ErrInvalid)
}

// CPUChoice says where a task's thread runs. The zero value, CPUAuto, lets
// gortapi choose; OnCPU(n) pins it; Unpinned leaves it to the scheduler.
type CPUChoice int

const (
	// CPUAuto: Options.CPUs (or RTAPI_CPU), else the highest isolated
	// CPU of the process's cpuset, else unpinned — LinuxCNC's rule.
	CPUAuto CPUChoice = 0
	// Unpinned: no affinity is set.
	Unpinned CPUChoice = -1
)

// OnCPU pins a task to CPU n, which must be online and in the process's
// cpuset. A negative n is ErrInvalid at NewTask.
func OnCPU(n int) CPUChoice {
	if n < 0 {
		return CPUChoice(max(n, math.MinInt+1) - 1) // below Unpinned
	}
	return CPUChoice(min(n, math.MaxInt-1) + 1)
}

// cpu returns the n of OnCPU(n).
func (c CPUChoice) cpu() int {
	if c < Unpinned {
		return int(c) + 1
	}
	return int(c) - 1
}

// TaskSpec describes a task. The zero value of each field is a sensible
// default, except Name, which is required.
type TaskSpec struct {
	// Name identifies the task in errors, logs and statistics; unique
	// among the instance's tasks.
	Name string
	// Priority in [PrioLowest, PrioHighest]; 0 means PrioHighest.
	Priority int
	// Period of a periodic task; 0 for a task that is not periodic (its
	// WaitPeriod does not sleep). From the flavor's minimum (10 µs on Linux)
	// to MaxPeriod.
	Period time.Duration
	// CPU places the task's thread; see CPUChoice.
	CPU CPUChoice
	// Wake selects the wake-up mechanism; WakeAuto lets the flavor choose.
	Wake WakeMode
	// Overrun selects CatchUp (default) or Skip.
	Overrun OverrunPolicy
	// StackPrefault is the goroutine stack grown before the first cycle,
	// so that the body never copies its stack mid-cycle. Zero:
	// DefaultStackPrefault; at most MaxStackPrefault.
	StackPrefault int
	// HistogramBound overrides Options.HistogramBound for this task.
	HistogramBound time.Duration
	// Watchdog is how long the task may go without completing a cycle,
	// busy on its CPU at least half that time, before the watchdog of a
	// real-time flavor demotes it to SCHED_OTHER and faults it (a
	// *FaultError). Zero: DefaultWatchdogPeriods periods plus
	// DefaultWatchdogSlack if periodic, else none. Negative: none. At most
	// MaxPeriod.
	Watchdog time.Duration
	// Interference turns Stats.Interference on or off. Auto reads the
	// thread's counters (a getrusage system call) after a late wake-up and
	// about every 100 ms; On reads them every cycle, for exact counts.
	Interference Toggle
	// LateThreshold is the wake-up latency above which a wake-up counts
	// as late in Stats.Interference. Zero: DefaultLateThreshold(Period);
	// at most MaxPeriod.
	LateThreshold time.Duration
	// DeadlinePolicy faults a periodic task after a run of overruns or
	// one wake-up too late; the zero value never does.
	DeadlinePolicy DeadlinePolicy
	// SafeState, if not nil, brings what the task drives to a safe state
	// ("drop amp-enable, zero the DAC outputs"). It runs once, when the
	// task ends for any reason, on the task's thread before Wait returns.
	// When the watchdog faults the task it runs at once on a goroutine of
	// its own; the runaway body is not stopped (Go cannot kill it) and may
	// write its outputs again. It must return; its panic is logged.
	SafeState func()
	// TraceMark writes a line to the kernel's trace_marker whenever a
	// wake-up is later than TraceMark (cyclictest's --tracemark), one write
	// system call, counted in Stats.TraceMarks. Zero: none; at most
	// MaxPeriod. Start fails with ErrNotSupported without tracefs (or on
	// sim), ErrPermission where it is not writable (docs/GC.md, "A kernel
	// trace around a late wake-up").
	TraceMark time.Duration
	// TraceStop also stops the kernel's tracing at the first wake-up
	// later than TraceMark (cyclictest's -b); the task runs on.
	// Stats.TraceStopCycle says when. Needs TraceMark.
	TraceStop bool
	// TraceDir is the tracefs directory (or trace instance) the trace hook
	// writes in. Empty: the tracefs mount of /proc/self/mounts. Start
	// fails with ErrInvalid unless it is on a tracefs (statfs) and its
	// trace_marker and tracing_on are not symlinks.
	TraceDir string
}

// TaskState is where a task is in its life (Task.State).
type TaskState int32

// Task states, in the order a task goes through them.
const (
	TaskCreated TaskState = iota // NewTask made it; Start runs it
	TaskRunning
	TaskPaused
	TaskStopping // Stop asked it to end; it has not yet
	TaskDone     // its body returned, or it never started
)

// internal names of the states, as the task stores them
const (
	stateCreated  = int32(TaskCreated)
	stateRunning  = int32(TaskRunning)
	statePaused   = int32(TaskPaused)
	stateStopping = int32(TaskStopping)
	stateDone     = int32(TaskDone)
)

var stateNames = [...]string{"created", "running", "paused", "stopping", "done"}

// String gives "created", "running", "paused", "stopping" or "done".
func (s TaskState) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("TaskState(%d)", int32(s))
	}
	return stateNames[s]
}
