package rtapi

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/flavors"
	"github.com/gortapi/gortapi/internal/hist"
	"github.com/gortapi/gortapi/kerneldetect"
)

// Options configure Open. The zero value works: the flavor is chosen from
// the running kernel, memory is locked where that is safe, nothing is
// logged.
//
// Each setting can also come from the environment and from command-line
// flags (RegisterFlags). Precedence: a field set in code, then a flag, then
// the environment, then automatic detection.
type Options struct {
	// Flavor names the backend: "" or "auto" (the best that can run here),
	// "posix", "rt-preempt", "sim". Env RTAPI_FLAVOR, flag -rtapi.flavor.
	Flavor string
	// VanillaFIFO makes the posix flavor run tasks SCHED_FIFO, woken by
	// POSIX timers (seed 000). Env RTAPI_VANILLA_FIFO=1, flag
	// -rtapi.vanilla-fifo.
	VanillaFIFO bool
	// Strict refuses to run degraded: when SCHED_FIFO is refused, or on a
	// Xenomai or RTAI kernel that has no native backend here, Open or
	// Start fails instead of warning. Env RTAPI_STRICT=1, flag
	// -rtapi.strict.
	Strict bool
	// Logger receives set-up messages and, through the RT-safe message
	// ring, what task bodies report. nil: no output.
	Logger *zap.Logger
	// CPUs are the CPUs tasks are placed on when their TaskSpec.CPU is
	// CPUAuto. Empty: RTAPI_CPU, else the highest isolated CPU of the
	// process's cpuset, else unpinned. Env RTAPI_CPU (a list such as "1",
	// "2,3" or "0-3", CPUs below kerneldetect.MaxCPU), flag -rtapi.cpu.
	// Open copies the slice, so later changes to it have no effect. Each
	// CPU must be online and in the process's cpuset (the CPUs
	// sched_setaffinity may use, which include isolated CPUs outside its
	// current affinity): ErrInvalid otherwise.
	CPUs []int
	// LockMemory controls mlockall on real-time flavors. Auto locks when
	// the process may lock without limit (root, CAP_IPC_LOCK or an
	// unlimited RLIMIT_MEMLOCK). The lock is the process's: it holds while
	// any open instance asked for it, whatever the others asked, and
	// Close undoes it when the last of those closes — unless the program
	// had locked memory itself before (VmLck), in which case it is left
	// locked, since munlockall would undo the program's own lock. Env
	// RTAPI_LOCK_MEMORY=auto|on|off, flag -rtapi.lock-memory.
	LockMemory Toggle
	// Instance numbers this host's shared-memory segments, so that two
	// hosts can run side by side. Env RTAPI_INSTANCE, flag -rtapi.instance.
	Instance int
	// ShmGroup shares this host's segments with the members of one group
	// (a name or a numeric gid): segments it creates get that group and
	// mode 0660, and segments owned by a member are attached. Empty: only
	// this user and root. Env RTAPI_SHM_GROUP, flag -rtapi.shm-group.
	// docs/SECURITY.md says who may then write what.
	ShmGroup string
	// ShmAllowUIDs lists other users whose segments are attached (they
	// may still not be writable by everyone). Empty: only this user, root
	// and ShmGroup.
	ShmAllowUIDs []int
	// Kernel is the detection report to choose the flavor from. nil:
	// kerneldetect.Detect() on the live system.
	Kernel *kerneldetect.Report
	// HistogramBound is the default upper bound of each task's latency
	// histogram (1 µs buckets, like cyclictest -h). Zero: 10 ms.
	HistogramBound time.Duration
	// StopTimeout bounds how long Close waits for each task to stop.
	// Zero: 2 s.
	StopTimeout time.Duration
	// Sim configures the sim flavor: seed, hang timeout, trace size.
	// Other flavors ignore it. nil: SimOptions' defaults.
	Sim *SimOptions
	// TimerSignal is the real-time signal the posix-timer wake mode's
	// timers send to their task thread, which blocks it and collects it
	// with rt_sigtimedwait. Zero: DefaultTimerSignal. It must be a
	// real-time signal glibc leaves to applications, 34 (SIGRTMIN) to 64
	// (SIGRTMAX); pick one your program does not use. A program that does
	// use it still gets every instance sent to the process (kill(2),
	// sigqueue(3)): a task thread that collects one hands it on to the
	// main thread, where signal.Notify sees it (as SI_QUEUE).
	TimerSignal int
}

// Toggle is a three-way setting: Auto (the zero value), On or Off.
type Toggle int8

// Toggle values.
const (
	Auto Toggle = 0
	On   Toggle = 1
	Off  Toggle = -1
)

func (t Toggle) String() string {
	switch t {
	case On:
		return "on"
	case Off:
		return "off"
	}
	return "auto"
}

// Set parses "auto", "on" or "off" (and the usual boolean spellings); it
// makes Toggle a flag.Value.
func (t *Toggle) Set(s string) error {
	switch strings.ToLower(s) {
	case "auto", "":
		*t = Auto
	case "on", "1", "true", "yes":
		*t = On
	case "off", "0", "false", "no":
		*t = Off
	default:
		return fmt.Errorf("%q is not auto, on or off: %w", s, ErrInvalid)
	}
	return nil
}

// Defaults of Options' zero fields.
const (
	DefaultHistogramBound = 10 * time.Millisecond
	DefaultStopTimeout    = 2 * time.Second
)

// RegisterFlags registers gortapi's command-line flags (-rtapi.flavor,
// -rtapi.vanilla-fifo, -rtapi.strict, -rtapi.cpu, -rtapi.lock-memory,
// -rtapi.instance, -rtapi.shm-group) on fs and returns the Options they fill in when fs is
// parsed. Fields set on the result after parsing win over the flags.
func RegisterFlags(fs *flag.FlagSet) *Options {
	o := &Options{}
	fs.StringVar(&o.Flavor, "rtapi.flavor", "", "RTAPI flavor: auto, posix, rt-preempt or sim (env RTAPI_FLAVOR)")
	fs.BoolVar(&o.VanillaFIFO, "rtapi.vanilla-fifo", false,
		"on a non-RT kernel, run tasks SCHED_FIFO woken by POSIX timers (env RTAPI_VANILLA_FIFO=1)")
	fs.BoolVar(&o.Strict, "rtapi.strict", false, "refuse to run degraded, e.g. without SCHED_FIFO (env RTAPI_STRICT=1)")
	fs.Func("rtapi.cpu", "CPUs for real-time tasks, e.g. 1 or 2,3 (env RTAPI_CPU)", func(s string) error {
		cpus, err := parseCPUs(s)
		o.CPUs = cpus
		return err
	})
	fs.Var(&o.LockMemory, "rtapi.lock-memory", "mlockall on real-time flavors: auto, on or off (env RTAPI_LOCK_MEMORY)")
	fs.IntVar(&o.Instance, "rtapi.instance", 0, "instance number of this host's shared memory (env RTAPI_INSTANCE)")
	fs.StringVar(&o.ShmGroup, "rtapi.shm-group", "", "share shared-memory segments with this group, name or gid (env RTAPI_SHM_GROUP)")
	return o
}

// withEnv returns o with its zero fields filled from the environment, and
// the defaults applied.
func (o Options) withEnv(getenv func(string) string) (Options, error) {
	if o.Flavor == "" {
		o.Flavor = getenv("RTAPI_FLAVOR")
	}
	if !o.VanillaFIFO {
		b, err := envBool(getenv, "RTAPI_VANILLA_FIFO")
		if err != nil {
			return o, err
		}
		o.VanillaFIFO = b
	}
	if !o.Strict {
		b, err := envBool(getenv, "RTAPI_STRICT")
		if err != nil {
			return o, err
		}
		o.Strict = b
	}
	// A copy: the caller's slice may change after Open, unchecked.
	o.CPUs = slices.Clone(o.CPUs)
	if len(o.CPUs) == 0 {
		if s := getenv("RTAPI_CPU"); s != "" {
			cpus, err := parseCPUs(s)
			if err != nil {
				return o, fmt.Errorf("RTAPI_CPU: %w", err)
			}
			o.CPUs = cpus
		}
	}
	if o.LockMemory == Auto {
		if s := getenv("RTAPI_LOCK_MEMORY"); s != "" {
			if err := o.LockMemory.Set(s); err != nil {
				return o, fmt.Errorf("RTAPI_LOCK_MEMORY: %w", err)
			}
		}
	}
	if o.Instance == 0 {
		if s := getenv("RTAPI_INSTANCE"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return o, fmt.Errorf("RTAPI_INSTANCE=%q is not a non-negative integer: %w", s, ErrInvalid)
			}
			o.Instance = n
		}
	}
	if o.Instance < 0 {
		return o, fmt.Errorf("instance %d is negative: %w", o.Instance, ErrInvalid)
	}
	if o.ShmGroup == "" {
		o.ShmGroup = getenv("RTAPI_SHM_GROUP")
	}
	if o.HistogramBound == 0 {
		o.HistogramBound = DefaultHistogramBound
	}
	if o.HistogramBound < time.Microsecond {
		return o, fmt.Errorf("histogram bound %v is below 1µs: %w", o.HistogramBound, ErrInvalid)
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if o.StopTimeout < 0 {
		return o, fmt.Errorf("stop timeout %v is negative: %w", o.StopTimeout, ErrInvalid)
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return o.checkBounds()
}

// checkBounds validates the settings rtapi's task lifecycle depends on:
// the timer signal and the histogram bound.
func (o Options) checkBounds() (Options, error) {
	if o.TimerSignal == 0 {
		o.TimerSignal = DefaultTimerSignal
	}
	if o.TimerSignal < flavors.TimerSignalMin || o.TimerSignal > flavors.TimerSignalMax {
		return o, fmt.Errorf("timer signal %d is not a real-time signal in [%d, %d]: %w",
			o.TimerSignal, flavors.TimerSignalMin, flavors.TimerSignalMax, ErrInvalid)
	}
	if err := hist.Validate(time.Microsecond, o.HistogramBound); err != nil {
		return o, fmt.Errorf("%v: %w", err, ErrInvalid)
	}
	return o, nil
}

func envBool(getenv func(string) string, name string) (bool, error) {
	s := getenv(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%s=%q is not a boolean: %w", name, s, ErrInvalid)
	}
	return b, nil
}

// parseCPUs parses a CPU list ("1", "2,3" or "0-3,6") with the bounded
// parser every CPU list in gortapi goes through.
func parseCPUs(s string) ([]int, error) {
	cpus, err := kerneldetect.ParseCPUList(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	return cpus, nil
}

var osGetenv = os.Getenv

// DefaultTimerSignal is the signal the posix-timer wake mode uses unless
// Options.TimerSignal names another: 40, SIGRTMIN+6 in glibc's numbering.
const DefaultTimerSignal = flavors.DefaultTimerSignal
