package backend

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
)

// Flavor is one backend, opened for one rtapi instance. Its methods are
// set-up calls, except Now, which a task body may call.
type Flavor interface {
	// Name is the registry name ("posix", "rt-preempt", "sim").
	Name() string
	// RealTime reports whether task threads get a real-time policy.
	RealTime() bool
	// Now is the flavor's clock in nanoseconds: CLOCK_MONOTONIC on the
	// Linux backends, virtual time on the sim backend.
	// RT-safe.
	Now() int64
	// Priorities is the range of task priorities, lowest first.
	Priorities() (lowest, highest int)
	// MinPeriod is the shortest task period the backend accepts.
	MinPeriod() time.Duration
	// Bind is called on a task's goroutine (locked to its OS thread when
	// Traits().OSThreads), before the first cycle: it applies the policy,
	// priority and affinity and returns the Waker the task sleeps with.
	Bind(spec ThreadSpec) (Waker, Binding, error)
	// Close releases what Open took (memory locks, latency requests).
	Close() error
	// Traits says how the flavor runs tasks, so that rtapi acts on what
	// a flavor needs instead of asking which flavor it is.
	Traits() Traits
	// Enter admits a task lifecycle call (Start, Pause, Resume, Stop)
	// on the calling goroutine, before it acts; leave is called once it
	// has. A virtual clock refuses, with an error matching ErrState, a
	// call it could not order: one made while it runs tasks, from a
	// goroutine that is not running them. The others admit every call.
	Enter() (leave func(), err error)
}

// Traits is what a flavor declares about its clock and its threads.
type Traits struct {
	// VirtualClock: Now is a clock the flavor moves itself (sim), not
	// CLOCK_MONOTONIC. A task's thread counters (getrusage: faults,
	// context switches) then say nothing about its timing.
	VirtualClock bool
	// OSThreads: each task runs on an OS thread of its own whose policy,
	// priority and affinity Bind sets, so Bind must be called on a
	// goroutine locked to a fresh OS thread that is never reused. False:
	// the flavor's threads are virtual; Bind and the task body run on an
	// ordinary goroutine.
	OSThreads bool
}

// ThreadSpec is what Bind needs to know about a task.
type ThreadSpec struct {
	Name     string
	Priority int
	// CPUs to pin the thread to; nil leaves it unpinned.
	CPUs []int
	// Period in nanoseconds; 0 for a task that is not periodic.
	Period int64
	// Wake is the wake-up mechanism; WakeAuto lets the flavor choose.
	Wake WakeMode
	// Control is the task's control word. When it is non-zero and the
	// Waker's Interrupt is called, the task's wait returns at once. nil:
	// waits cannot be interrupted.
	Control *atomic.Uint32
}

// Bits of ThreadSpec.Control that a flavor may read: ControlStop is set
// by Stop, ControlPause while the task is paused. The others are rtapi's.
const (
	ControlStop uint32 = 1 << iota
	ControlPause
)

// Binding is what Bind actually applied to the thread.
type Binding struct {
	Tid      int
	Policy   sys.Policy
	Priority int // 0 under SCHED_OTHER
	CPUs     []int
	Wake     WakeMode
	// Degraded is non-empty when the flavor could not apply what it
	// wanted and carried on (SCHED_FIFO refused without Strict).
	Degraded string
	// Virtual is true on the sim flavor: the thread runs on a virtual
	// clock, scheduled by Priority among the sim's threads; Policy and
	// Tid say nothing about it.
	Virtual bool
}

// Config is a flavor's settings, every one resolved: rtapi.Open and
// flavors.Select fill in the defaults and check the values, so a backend
// takes each field as it is.
type Config struct {
	// Kernel is the detection report the choice is based on; never nil.
	Kernel *kerneldetect.Report
	// VanillaFIFO switches the posix flavor to SCHED_FIFO + POSIX timers.
	VanillaFIFO bool
	// Strict refuses to run degraded (no SCHED_FIFO, no native backend)
	// instead of warning.
	Strict bool
	// LockMemory says when a real-time flavor locks memory. Memory stays
	// locked while any open flavor asked for it (see harden).
	LockMemory LockMode
	// Logger gets set-up messages; never nil.
	Logger *zap.Logger
	// TimerSignal is the signal the posix-timer wake mode uses, in
	// [TimerSignalMin, TimerSignalMax] (ResolveTimerSignal).
	TimerSignal int
	// Probe tells whether SCHED_FIFO can be set at priority prio; nil
	// means sys.ProbeSchedFIFOAt. Tests replace it to exercise selection.
	Probe func(prio int) error
	// Sim is the sim flavor's options, an rtapi.SimOptions (nil: the
	// zero options); other flavors ignore it.
	Sim any
}

// LockMode is when a real-time flavor locks memory (mlockall).
type LockMode uint8

// LockMode values.
const (
	// LockIfUnlimited locks when the process may lock without limit: root,
	// CAP_IPC_LOCK or an unlimited RLIMIT_MEMLOCK.
	LockIfUnlimited LockMode = iota
	LockAlways
	LockNever
)

// Timer signals: the real-time signals a POSIX timer may use (glibc keeps
// 32 and 33 for itself), and the default, SIGRTMIN+6 in glibc's numbering.
const (
	TimerSignalMin     = 34
	TimerSignalMax     = 64
	DefaultTimerSignal = 40
)

// ResolveTimerSignal returns the timer signal n asks for: DefaultTimerSignal
// for 0, n itself when it is in [TimerSignalMin, TimerSignalMax]. Any other
// n is ErrInvalid.
func ResolveTimerSignal(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultTimerSignal, nil
	case n < TimerSignalMin || n > TimerSignalMax:
		return n, fmt.Errorf("timer signal %d is not a real-time signal in [%d, %d]: %w",
			n, TimerSignalMin, TimerSignalMax, ErrInvalid)
	}
	return n, nil
}

// DetectKernel returns k, or the live system's report
// (kerneldetect.Detect) when k is nil.
func DetectKernel(k *kerneldetect.Report) (*kerneldetect.Report, error) {
	if k != nil {
		return k, nil
	}
	k, err := kerneldetect.Detect()
	if err != nil {
		return nil, fmt.Errorf("detect kernel: %w", err)
	}
	return k, nil
}

func (c *Config) probe(prio int) error {
	if c.Probe != nil {
		return c.Probe(prio)
	}
	return sys.ProbeSchedFIFOAt(prio)
}

// Descriptor describes a registered backend.
type Descriptor struct {
	// Name is what Options.Flavor and RTAPI_FLAVOR take.
	Name string
	// Open opens the backend, or says why it cannot run here (wrap
	// ErrNotSupported or ErrPermission). why explains the choice.
	Open func(cfg Config) (f Flavor, why string, err error)
}

var (
	registryMu sync.Mutex
	registry   = map[string]Descriptor{}
)

// Register adds a backend. It panics on a duplicate or empty name: that is
// a programming error caught at init time.
func Register(d Descriptor) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if d.Name == "" || d.Open == nil {
		panic("backend.Register: descriptor needs a Name and an Open func")
	}
	if _, dup := registry[d.Name]; dup {
		panic("backend.Register: duplicate flavor " + d.Name)
	}
	registry[d.Name] = d
}

// Names lists the registered backends, sorted.
func Names() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SimName is the registry name of the sim flavor, which package rtapi/sim
// registers when a program imports it.
const SimName = "sim"

// Lookup returns the backend registered under name.
func Lookup(name string) (Descriptor, error) {
	registryMu.Lock()
	d, ok := registry[name]
	registryMu.Unlock()
	if !ok && name == SimName {
		return Descriptor{}, fmt.Errorf("the sim flavor is not linked into this program: "+
			"import _ \"github.com/gortapi/gortapi/rtapi/sim\" to register it: %w", ErrNotSupported)
	}
	if !ok {
		return Descriptor{}, fmt.Errorf("unknown flavor %q (valid: auto, %s): %w",
			name, strings.Join(Names(), ", "), ErrInvalid)
	}
	return d, nil
}

// Choice is the outcome of Select: the backend and why it was chosen.
type Choice struct {
	Flavor Flavor
	// Why is a sentence a user can act on: what was detected, what was
	// chosen, and what would do better.
	Why string
}

// Select opens the backend named name ("" or "auto": the best one that
// can run on this kernel) with cfg, which it takes as resolved. A backend
// asked for by name that cannot run is an error, never a silent fallback.
func Select(name string, cfg Config) (Choice, error) {
	if cfg.Kernel == nil {
		return Choice{}, fmt.Errorf("select flavor: no kernel report: %w", ErrInvalid)
	}
	if name != "" && name != "auto" {
		d, err := Lookup(name)
		if err != nil {
			return Choice{}, err
		}
		f, why, err := d.Open(cfg)
		if err != nil {
			return Choice{}, fmt.Errorf("flavor %s: %w", name, err)
		}
		return Choice{Flavor: f, Why: "asked for by name; " + why}, nil
	}
	return selectAuto(cfg)
}

// selectAuto picks rt-preempt where the kernel is real-time and SCHED_FIFO
// can be set, posix everywhere else, and says why.
func selectAuto(cfg Config) (Choice, error) {
	k := cfg.Kernel
	var native string
	switch k.Kind {
	case kerneldetect.Xenomai:
		native = "Xenomai"
		if k.Xenomai != nil && k.Xenomai.Core != "" {
			native += " (" + k.Xenomai.Core + ")"
		}
	case kerneldetect.RTAI:
		native = "RTAI"
	}
	if native != "" {
		msg := native + " detected, but gortapi has no native " + native +
			" backend (that needs cgo); tasks would run as Linux-domain SCHED_FIFO threads"
		if cfg.Strict {
			return Choice{}, fmt.Errorf("%s; Strict refuses that: %w", msg, ErrNotSupported)
		}
		cfg.Logger.Warn(msg)
		d, _ := Lookup(RTPreemptName)
		f, why, err := d.Open(cfg)
		if err == nil {
			return Choice{Flavor: f, Why: msg + "; " + why}, nil
		}
		return fallbackPosix(cfg, msg+"; "+err.Error())
	}
	if k.Kind == kerneldetect.PreemptRT {
		d, _ := Lookup(RTPreemptName)
		f, why, err := d.Open(cfg)
		if err == nil {
			return Choice{Flavor: f, Why: "PREEMPT_RT kernel " + k.Uname.Release + "; " + why}, nil
		}
		if cfg.Strict {
			return Choice{}, fmt.Errorf("PREEMPT_RT kernel, but flavor %s cannot run: %w", RTPreemptName, err)
		}
		msg := "PREEMPT_RT kernel, but " + err.Error() + "; running the non-real-time posix flavor"
		cfg.Logger.Warn(msg)
		return fallbackPosix(cfg, msg)
	}
	return fallbackPosix(cfg, kernelSentence(k))
}

func fallbackPosix(cfg Config, why string) (Choice, error) {
	d, _ := Lookup(PosixName)
	f, fwhy, err := d.Open(cfg)
	if err != nil {
		return Choice{}, err
	}
	return Choice{Flavor: f, Why: why + "; " + fwhy}, nil
}

func kernelSentence(k *kerneldetect.Report) string {
	model := k.Preempt.Effective()
	if model == "" {
		model = "unknown"
	}
	s := fmt.Sprintf("%s kernel %s (preemption %s", k.Kind, k.Uname.Release, model)
	if k.Preempt.Dynamic {
		s += ", PREEMPT_DYNAMIC"
	}
	return s + ")"
}

// ResolveWake maps WakeAuto to the flavor's default and validates the rest.
func ResolveWake(m, def WakeMode) (WakeMode, error) {
	if m == WakeAuto {
		return def, nil
	}
	if !slices.Contains([]WakeMode{WakeNanosleep, WakeTimerfd, WakePosixTimer}, m) {
		return 0, fmt.Errorf("wake mode %d: %w", m, ErrInvalid)
	}
	return m, nil
}
