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
	// Bind applies the task's policy, priority and affinity on its
	// goroutine before the first cycle and returns its Waker.
	Bind(spec ThreadSpec) (Waker, Binding, error)
	// Close releases what Open took (memory locks, latency requests).
	Close() error
	// Traits says how the flavor runs tasks.
	Traits() Traits
	// Enter admits a lifecycle call (Start, Pause, Resume, Stop) before it
	// acts; leave is called after. A virtual clock refuses (ErrState) one
	// it cannot order: from outside its tasks while it runs them.
	Enter() (leave func(), err error)
}

// Traits is what a flavor declares about its clock and its threads.
type Traits struct {
	// VirtualClock: Now is the flavor's own clock (sim); getrusage
	// counters then say nothing about a task's timing.
	VirtualClock bool
	// OSThreads: Bind must run on a goroutine locked to a fresh OS thread
	// never reused, whose policy and affinity it sets. False: the threads
	// are virtual, on ordinary goroutines.
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
	// Control is the task's control word: non-zero plus Waker.Interrupt
	// ends a wait at once. nil: waits are not interruptible.
	Control *atomic.Uint32
}

// Bits of ThreadSpec.Control a flavor may read (the others are rtapi's).
const (
	ControlStop  uint32 = 1 << iota // set by Stop
	ControlPause                    // set while paused
)

// Binding is what Bind actually applied to the thread.
type Binding struct {
	Tid      int
	Policy   sys.Policy
	Priority int // 0 under SCHED_OTHER
	CPUs     []int
	Wake     WakeMode
	// Degraded says what the flavor could not apply and ran without.
	Degraded string
	// Virtual: a sim thread, scheduled by Priority; Policy, Tid mean nothing.
	Virtual bool
}

// Config is a flavor's settings, resolved and checked by rtapi.Open or
// flavors.Select.
type Config struct {
	// Kernel is the detection report the choice is based on; never nil.
	Kernel *kerneldetect.Report
	// VanillaFIFO switches the posix flavor to SCHED_FIFO + POSIX timers.
	VanillaFIFO bool
	// Strict refuses to run degraded instead of warning.
	Strict bool
	// LockMemory says when a real-time flavor locks memory; it stays
	// locked while any open flavor asked for it.
	LockMemory LockMode
	// Logger gets set-up messages; never nil.
	Logger *zap.Logger
	// TimerSignal is the posix-timer wake mode's signal (ResolveTimerSignal).
	TimerSignal int
	// Probe tells whether SCHED_FIFO can be set at prio; nil means
	// sys.ProbeSchedFIFOAt.
	Probe func(prio int) error
	// Sim is the sim flavor's rtapi.SimOptions (nil: zero options).
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

// Timer signals a POSIX timer may use, and the default (SIGRTMIN+6).
const (
	TimerSignalMin     = 34
	TimerSignalMax     = 64
	DefaultTimerSignal = 40
)

// ResolveTimerSignal returns DefaultTimerSignal for 0, n when it is in
// [TimerSignalMin, TimerSignalMax], else ErrInvalid.
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

// DetectKernel returns k, or kerneldetect.Detect() when k is nil.
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
	// Open opens the backend and says why, or fails wrapping
	// ErrNotSupported or ErrPermission.
	Open func(cfg Config) (f Flavor, why string, err error)
}

var (
	registryMu sync.Mutex
	registry   = map[string]Descriptor{}
)

// Register adds a backend. It panics on a duplicate or empty name.
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

// SimName is the sim flavor's name, registered by importing rtapi/sim.
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
	// Why says what was detected, chosen, and what would do better.
	Why string
}

// Select opens the backend named name ("" or "auto": the best one that
// can run here) with cfg. One asked for by name that cannot run is an
// error, never a fallback.
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

// selectAuto picks rt-preempt on a real-time kernel that allows
// SCHED_FIFO, else posix.
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
