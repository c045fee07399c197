package rtapi

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/gortapi/gortapi/internal/backend"
	config "github.com/gortapi/gortapi/internal/settings"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi/hist"
)

// Options configure Open. The zero value works: the flavor is chosen from
// the running kernel, memory is locked where that is safe, nothing is
// logged.
//
// Most settings can also be given as a command-line flag (RegisterFlags)
// or an environment variable. Open resolves each setting on its own,
// taking the first of these that has a value:
//
//  1. The field. A zero field is unset, except one written by its flag:
//     a flag given explicitly counts whatever its value, so
//     -rtapi.strict=false beats RTAPI_STRICT=1, and -rtapi.instance=0
//     beats RTAPI_INSTANCE=3. RegisterFlags's flags write the fields of
//     the Options it returns, so code that sets a field after parsing
//     the flags overrides the flag, and code that sets one before gives
//     a default the flag may override.
//  2. The environment variable, when it is non-empty.
//  3. The default, or what Open detects.
//
// To force a yes/no setting off against the environment in code, set its
// Toggle to Off: Auto, the zero value, is "unset".
//
//	field           flag                    environment            unset
//	Flavor          -rtapi.flavor           RTAPI_FLAVOR           detected: rt-preempt or posix
//	VanillaFIFO     -rtapi.vanilla-fifo     RTAPI_VANILLA_FIFO     off
//	Strict          -rtapi.strict           RTAPI_STRICT           off
//	CPUs            -rtapi.cpu              RTAPI_CPU              highest isolated CPU, else unpinned
//	LockMemory      -rtapi.lock-memory      RTAPI_LOCK_MEMORY      lock where it is safe
//	Instance        -rtapi.instance         RTAPI_INSTANCE         0
//	ShmGroup        -rtapi.shm-group        RTAPI_SHM_GROUP        this user and root only
//	HistogramBound  -rtapi.histogram-bound  RTAPI_HISTOGRAM_BOUND  DefaultHistogramBound
//	StopTimeout     -rtapi.stop-timeout     RTAPI_STOP_TIMEOUT     DefaultStopTimeout
//	TimerSignal     -rtapi.timer-signal     RTAPI_TIMER_SIGNAL     DefaultTimerSignal
//	GCShield        -rtapi.gc-shield        RTAPI_GC_SHIELD        on for real-time flavors
//	SpinGuard       -rtapi.spin-guard       RTAPI_SPIN_GUARD       on for real-time flavors
//	SpareProcs      -rtapi.spare-procs      RTAPI_SPARE_PROCS      on where the spin guard runs
//	RuntimeFIFO     -rtapi.runtime-fifo     RTAPI_RUNTIME_FIFO     on for SCHED_FIFO tasks, with a valve
//	Logger, ShmAllowUIDs, Kernel, Sim: code only
//
// GORTAPI_GC_SHIELD, RTAPI_GC_SHIELD's older name, is still read; the two
// set to different values are an error, never a silent choice. Yes/no
// variables and flags take auto, on or off (or 1, 0, true, false, yes,
// no); durations take Go's syntax (10ms); CPU lists the kernel's (0-3,8).
// A value a flag or variable cannot take is an error matching ErrInvalid
// that names the flag or variable: flag.FlagSet.Parse fails, or Open.
type Options struct {
	// Flavor names the backend: "" or "auto" (the best that can run here),
	// "posix", "rt-preempt", "sim"; any other name is ErrInvalid. "sim"
	// needs an import of package rtapi/sim, which registers it; without
	// one it is ErrNotSupported.
	Flavor string
	// VanillaFIFO On makes the posix flavor run tasks SCHED_FIFO on a
	// kernel that is not real-time (vanilla or PREEMPT), each woken by a
	// periodic POSIX timer aimed at its thread. Auto (unset) and Off:
	// SCHED_OTHER.
	VanillaFIFO Toggle
	// Strict On refuses to run degraded: when SCHED_FIFO is refused, or on
	// a Xenomai or RTAI kernel that has no native backend here, Open or
	// Start fails instead of warning. Auto (unset) and Off: warn and run.
	Strict Toggle
	// Logger receives set-up messages and, through the message ring,
	// what task bodies report. nil: warnings and errors go to
	// stderr, one line each (a warning means the program runs other than
	// asked: SCHED_FIFO refused, a sim clock never advanced, a task
	// without the GC shield it wanted); zap.NewNop() silences them.
	Logger *zap.Logger
	// CPUs are the CPUs tasks are placed on when their TaskSpec.CPU is
	// CPUAuto. Empty: the highest isolated CPU of the process's cpuset,
	// else unpinned. As text: a list such as "1", "2,3" or "0-3", CPUs
	// below kerneldetect.MaxCPU. Open copies the slice, so later changes
	// to it have no effect. Each CPU must be online and in the process's
	// cpuset (the CPUs sched_setaffinity may use, which include isolated
	// CPUs outside its current affinity): ErrInvalid otherwise.
	CPUs []int
	// LockMemory controls mlockall on real-time flavors. Auto locks when
	// the process may lock without limit (root, CAP_IPC_LOCK or an
	// unlimited RLIMIT_MEMLOCK). What is mapped at Open is faulted in and
	// locked; what is mapped later (heap growth, new threads' stacks) is
	// locked as it is first touched (MCL_ONFAULT), not faulted in whole
	// under the process's memory-map lock.
	//
	// The lock is the process's: it holds while any open instance asked
	// for it, whatever the others asked, and Close undoes it when the
	// last of those closes — unless the program had locked memory itself
	// before (VmLck), in which case it is left locked, since munlockall
	// would undo the program's own lock.
	LockMemory Toggle
	// Instance numbers this host's shared-memory segments, so that two
	// hosts can run side by side. Negative: ErrInvalid.
	Instance int
	// ShmGroup shares this host's segments with the members of one group
	// (a name or a numeric gid): segments it creates get that group and
	// mode 0660, and segments owned by a member are attached. Empty: only
	// this user and root. docs/SECURITY.md says who may then write what.
	ShmGroup string
	// ShmAllowUIDs lists other users whose segments are attached (they
	// may still not be writable by everyone). Empty: only this user, root
	// and ShmGroup.
	ShmAllowUIDs []int
	// Kernel is the detection report to choose the flavor from. nil:
	// kerneldetect.Detect() on the live system.
	Kernel *kerneldetect.Report
	// HistogramBound is the default upper bound of each task's latency
	// histogram (1 µs buckets, like cyclictest -h). Zero:
	// DefaultHistogramBound. Below 1 µs or more buckets than a histogram
	// holds: ErrInvalid.
	HistogramBound time.Duration
	// StopTimeout bounds how long Close waits for each task to stop.
	// Zero: DefaultStopTimeout. Negative: ErrInvalid.
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
	// GCShield is the default of TaskSpec.GCShield for this instance's
	// tasks: a task whose own GCShield is Auto is shielded when this is
	// On, not when it is Off, and on real-time flavors only when it is
	// Auto (unset). For measurements, RTAPI_GC_SHIELD=off turns the
	// shield off without changing the program.
	GCShield Toggle
	// SpinGuard bounds how long a task thread under SCHED_FIFO can keep
	// its CPU without a context switch: to DefaultSpinBound, or the
	// task's period when longer; the thread then runs SCHED_OTHER until
	// it has been switched out once (Stats.SpinBreaks counts it). The Go
	// runtime has loops that spin until an ordinary thread of the process
	// lets go of something; at SCHED_FIFO such a spin can stall the whole
	// task set until the kernel's RT throttling (docs/GC.md). The guard
	// is a second process, this program re-executed, started by the
	// first task Start. Auto (unset): on for real-time flavors, with a
	// warning when it cannot start; On: Start fails when it cannot; Off:
	// none.
	SpinGuard Toggle
	// SpareProcs raises GOMAXPROCS by one for each task: a task thread
	// waking from its sleep then finds an idle P instead of waiting for
	// an ordinary thread of the runtime to hand it one, which is what
	// delays the wake-ups of a task set by 10-25 ms on a busy process
	// (docs/GC.md, "Spare Ps"). Auto (unset): on where the spin guard
	// runs; On: on flavors with OS threads; Off: GOMAXPROCS is left alone.
	// Each change stops the world, which a running task waits out, so the
	// first Start of a set raises it for every task not yet started, and
	// it goes back down once the last of them has ended; only a task
	// started later than that changes it while others run. A GOMAXPROCS
	// environment variable is always left alone, and so is a GOMAXPROCS
	// the program changes while tasks run.
	SpareProcs Toggle
	// RuntimeFIFO runs every other thread of the process at SCHED_FIFO
	// priority 1 while a task runs at SCHED_FIFO on a real-time flavor:
	// the Go runtime's threads, and with them every goroutine that is not
	// a task, the garbage collector's workers included. They then hand a
	// descheduled task its P back without waiting behind the machine's
	// SCHED_OTHER load (docs/GC.md, "Runtime threads at SCHED_FIFO 1").
	// Auto (unset) does so until those threads keep a CPU busy (80 % of
	// one over half a second), then gives them SCHED_OTHER back for the
	// rest of the set and logs a warning. On keeps them at 1 however
	// busy: a CPU-bound goroutine then keeps ordinary processes off its
	// CPU until RT throttling lets them run. Off leaves them SCHED_OTHER.
	RuntimeFIFO Toggle

	// flagged has bit i set when settings[i]'s flag was given: the field
	// then holds a value even when it is the zero one.
	flagged uint32
}

// Defaults of Options' zero fields.
const (
	DefaultHistogramBound = 10 * time.Millisecond
	DefaultStopTimeout    = 2 * time.Second
)

// DefaultTimerSignal is the signal the posix-timer wake mode uses unless
// Options.TimerSignal names another: 40, SIGRTMIN+6 in glibc's numbering.
const DefaultTimerSignal = backend.DefaultTimerSignal

// RegisterFlags registers a flag on fs for each setting the table in
// Options' doc gives one (-rtapi.flavor, -rtapi.strict, ...), and returns
// the Options they fill in when fs is parsed. A flag's value is checked
// when it is parsed: a bad one makes fs.Parse fail, naming the flag.
// Fields set on the result after parsing win over the flags. A nil fs, or
// one that already has these flags, panics: a programming error.
//
// -rtapi.flavor sim, or RTAPI_FLAVOR=sim left in the environment, makes
// any program that uses these flags a simulation: its tasks run only
// while package rtapi/sim advances the virtual clock. A program that does
// not is refused rather than run zero cycles: RT.Run returns
// ErrNotSupported at once, and RT.Close warns (to stderr unless
// Options.Logger says otherwise) when started tasks never ran.
func RegisterFlags(fs *flag.FlagSet) *Options {
	return registerFlags("RegisterFlags", fs, func(string) bool { return true })
}

// RegisterShmFlags is RegisterFlags for a program that runs no task and
// only opens a host's shared memory (a monitor): it registers
// -rtapi.instance and -rtapi.shm-group, and no flag that would be
// accepted and then ignored. A nil fs, or one that already has these
// flags, panics.
func RegisterShmFlags(fs *flag.FlagSet) *Options {
	return registerFlags("RegisterShmFlags", fs, func(field string) bool { return field == "Instance" || field == "ShmGroup" })
}

func registerFlags(name string, fs *flag.FlagSet, want func(field string) bool) *Options {
	if fs == nil {
		panic("rtapi." + name + ": nil FlagSet (use flag.CommandLine for the program's flags)")
	}
	o := &Options{}
	settings.Register(fs, o, &o.flagged, want)
	return o
}

// resolve returns o with every setting resolved as Options' doc says —
// the field, else the environment (read with getenv), else the default —
// and checked.
func (o Options) resolve(getenv func(string) string) (Options, error) {
	err := settings.Resolve(&o, o.flagged, getenv)
	return o, err
}

// setting is one field of Options: where else it may come from, how its
// text reads, and what it must be. RegisterFlags and resolve both walk
// the table, so a setting cannot have a flag that reads differently from
// its variable.
type setting = config.Setting[Options]

// field is the value of a field of Options of type T.
type field[T any] = config.Field[Options, T]

// settings lists every field of Options (a test checks that none is
// missing), in the order resolve checks them.
var settings = config.Table[Options]{{
	Field: "Flavor", Flag: "rtapi.flavor", Env: "RTAPI_FLAVOR",
	Usage: "RTAPI `flavor`: auto, posix, rt-preempt or sim",
	Value: field[string]{At: func(o *Options) *string { return &o.Flavor },
		Unset: config.IsZero[string], Decode: config.Text, Verify: checkFlavor, Text: func(s string) string { return s }},
}, {
	Field: "VanillaFIFO", Flag: "rtapi.vanilla-fifo", Env: "RTAPI_VANILLA_FIFO",
	Usage: "on a non-RT kernel, run tasks SCHED_FIFO woken by POSIX timers",
	Value: toggle(func(o *Options) *Toggle { return &o.VanillaFIFO }, true),
}, {
	Field: "Strict", Flag: "rtapi.strict", Env: "RTAPI_STRICT",
	Usage: "refuse to run degraded, e.g. without SCHED_FIFO",
	Value: toggle(func(o *Options) *Toggle { return &o.Strict }, true),
}, {
	Field: "Logger",
	Value: field[*zap.Logger]{At: func(o *Options) **zap.Logger { return &o.Logger },
		Unset: config.IsZero[*zap.Logger], Verify: defaultLogger},
}, {
	Field: "CPUs", Flag: "rtapi.cpu", Env: "RTAPI_CPU",
	Usage: "a `list` of CPUs for real-time tasks, e.g. 1, 2,3 or 0-3",
	Value: field[[]int]{At: func(o *Options) *[]int { return &o.CPUs },
		Unset: config.IsEmpty[int], Decode: parseCPUs, Verify: copyCPUs, Text: kerneldetect.FormatCPUList},
}, {
	Field: "LockMemory", Flag: "rtapi.lock-memory", Env: "RTAPI_LOCK_MEMORY",
	Usage: "mlockall on real-time flavors: `auto|on|off`",
	Value: toggle(func(o *Options) *Toggle { return &o.LockMemory }, false),
}, {
	Field: "Instance", Flag: "rtapi.instance", Env: "RTAPI_INSTANCE",
	Usage: "instance `number` of this host's shared memory",
	Value: field[int]{At: func(o *Options) *int { return &o.Instance },
		Unset: config.IsZero[int], Decode: config.Int, Verify: checkInstance, Text: strconv.Itoa},
}, {
	Field: "ShmGroup", Flag: "rtapi.shm-group", Env: "RTAPI_SHM_GROUP",
	Usage: "share shared-memory segments with this `group`, a name or gid",
	Value: field[string]{At: func(o *Options) *string { return &o.ShmGroup },
		Unset: config.IsZero[string], Decode: config.Text, Text: func(s string) string { return s }},
}, {
	Field: "ShmAllowUIDs",
	Value: field[[]int]{At: func(o *Options) *[]int { return &o.ShmAllowUIDs }, Unset: config.IsEmpty[int]},
}, {
	Field: "Kernel",
	Value: field[*kerneldetect.Report]{At: func(o *Options) **kerneldetect.Report { return &o.Kernel },
		Unset: config.IsZero[*kerneldetect.Report]},
}, {
	Field: "HistogramBound", Flag: "rtapi.histogram-bound", Env: "RTAPI_HISTOGRAM_BOUND",
	Usage: "default bound of each task's latency histogram, a `duration` such as 10ms",
	Value: field[time.Duration]{At: func(o *Options) *time.Duration { return &o.HistogramBound },
		Unset: config.IsZero[time.Duration], Decode: config.Duration, Verify: checkHistogramBound, Text: time.Duration.String},
}, {
	Field: "StopTimeout", Flag: "rtapi.stop-timeout", Env: "RTAPI_STOP_TIMEOUT",
	Usage: "how long Close waits for each task to stop, a `duration` such as 2s",
	Value: field[time.Duration]{At: func(o *Options) *time.Duration { return &o.StopTimeout },
		Unset: config.IsZero[time.Duration], Decode: config.Duration, Verify: checkStopTimeout, Text: time.Duration.String},
}, {
	Field: "Sim",
	Value: field[*SimOptions]{At: func(o *Options) **SimOptions { return &o.Sim }, Unset: config.IsZero[*SimOptions]},
}, {
	Field: "TimerSignal", Flag: "rtapi.timer-signal", Env: "RTAPI_TIMER_SIGNAL",
	Usage: "real-time `signal` of the posix-timer wake mode, 34 to 64",
	Value: field[int]{At: func(o *Options) *int { return &o.TimerSignal },
		Unset: config.IsZero[int], Decode: config.Int, Verify: backend.ResolveTimerSignal, Text: strconv.Itoa},
}, {
	Field: "GCShield", Flag: "rtapi.gc-shield", Env: "RTAPI_GC_SHIELD", Legacy: "GORTAPI_GC_SHIELD",
	Usage: "GC shield of tasks that leave it auto: `auto|on|off`",
	Value: toggle(func(o *Options) *Toggle { return &o.GCShield }, false),
}, {
	Field: "SpinGuard", Flag: "rtapi.spin-guard", Env: "RTAPI_SPIN_GUARD",
	Usage: "bound task threads' spins with a guard process: `auto|on|off`",
	Value: toggle(func(o *Options) *Toggle { return &o.SpinGuard }, false),
}, {
	Field: "SpareProcs", Flag: "rtapi.spare-procs", Env: "RTAPI_SPARE_PROCS",
	Usage: "raise GOMAXPROCS by one per task: `auto|on|off`",
	Value: toggle(func(o *Options) *Toggle { return &o.SpareProcs }, false),
}, {
	Field: "RuntimeFIFO", Flag: "rtapi.runtime-fifo", Env: "RTAPI_RUNTIME_FIFO",
	Usage: "run the process's other threads at SCHED_FIFO 1 while tasks run: `auto|on|off`",
	Value: toggle(func(o *Options) *Toggle { return &o.RuntimeFIFO }, false),
}}

func toggle(at func(*Options) *Toggle, boolean bool) field[Toggle] {
	return field[Toggle]{At: at, Unset: config.IsZero[Toggle], Decode: parseToggle,
		Verify: checkToggle, Text: Toggle.String, Bool: boolean}
}

func parseToggle(s string) (Toggle, error) {
	var t Toggle
	err := t.Set(s)
	return t, err
}

func checkToggle(t Toggle) (Toggle, error) {
	if !t.Valid() {
		return t, fmt.Errorf("%v is not Auto, On or Off: %w", t, ErrInvalid)
	}
	return t, nil
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

// copyCPUs copies the list: the caller's slice may change after Open.
// Whether each CPU may be used is checked by Open, against the machine.
func copyCPUs(cpus []int) ([]int, error) { return slices.Clone(cpus), nil }

func checkFlavor(name string) (string, error) {
	if name == "" || name == "auto" {
		return name, nil
	}
	_, err := backend.Lookup(name)
	return name, err
}

func defaultLogger(l *zap.Logger) (*zap.Logger, error) {
	if l == nil {
		return stderrLogger(), nil
	}
	return l, nil
}

// stderrLogger is the logger an RT uses when Options.Logger is nil:
// warnings and errors, one line each, on stderr (zap's production
// console encoding). A warning from rtapi means the program runs other
// than asked (SCHED_FIFO refused, a sim clock never advanced, a task
// without the GC shield it wanted), so it is never dropped by default;
// Options.Logger zap.NewNop() silences it.
func stderrLogger() *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), zapcore.WarnLevel))
}

func checkInstance(n int) (int, error) {
	if n < 0 {
		return n, fmt.Errorf("instance %d is negative: %w", n, ErrInvalid)
	}
	return n, nil
}

func checkHistogramBound(d time.Duration) (time.Duration, error) {
	if d == 0 {
		return DefaultHistogramBound, nil
	}
	if err := hist.Validate(time.Microsecond, d); err != nil {
		return d, fmt.Errorf("%v: %w", err, ErrInvalid)
	}
	return d, nil
}

func checkStopTimeout(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return DefaultStopTimeout, nil
	case d < 0:
		return d, fmt.Errorf("stop timeout %v is negative: %w", d, ErrInvalid)
	}
	return d, nil
}

// backendConfig gives the settings of o, resolved, as a flavor takes them:
// VanillaFIFO and Strict on only when On, LockMemory's Auto as
// backend.LockIfUnlimited.
func (o *Options) backendConfig(kernel *kerneldetect.Report) backend.Config {
	lock := backend.LockIfUnlimited
	switch o.LockMemory {
	case On:
		lock = backend.LockAlways
	case Off:
		lock = backend.LockNever
	}
	return backend.Config{Kernel: kernel, VanillaFIFO: o.VanillaFIFO == On, Strict: o.Strict == On,
		LockMemory: lock, Logger: o.Logger, TimerSignal: o.TimerSignal}
}

var osGetenv = os.Getenv
