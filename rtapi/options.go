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
	"go.uber.org/zap/zapcore"

	"github.com/gortapi/gortapi/internal/backend"
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
	// unlimited RLIMIT_MEMLOCK). The lock is the process's: it holds while
	// any open instance asked for it, whatever the others asked, and
	// Close undoes it when the last of those closes — unless the program
	// had locked memory itself before (VmLck), in which case it is left
	// locked, since munlockall would undo the program's own lock.
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
	// SpareProcs raises GOMAXPROCS by one while each task runs, from its
	// Start until it ends: a task thread waking from its sleep then finds
	// an idle P instead of waiting for an ordinary thread of the runtime
	// to hand it one, which is what delays the wake-ups of a task set by
	// 10-25 ms on a busy process (docs/GC.md, "Spare Ps"). Auto (unset):
	// on where the spin guard runs; On: on flavors with OS threads; Off:
	// GOMAXPROCS is left alone. A GOMAXPROCS environment variable is
	// always left alone, and so is a GOMAXPROCS the program changes while
	// tasks run. Each change stops the world for a few microseconds, tasks
	// included.
	SpareProcs Toggle

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
	for i, s := range settings {
		if s.flag != "" && want(s.field) {
			fs.Var(settingFlag{o: o, i: i}, s.flag, s.usage+" (env "+s.env+")")
		}
	}
	return o
}

// resolve returns o with every setting resolved as Options' doc says —
// the field, else the environment (read with getenv), else the default —
// and checked.
func (o Options) resolve(getenv func(string) string) (Options, error) {
	for i, s := range settings {
		source := "Options." + s.field // what an error names
		given := s.value.isSet(&o) || o.flagged&(1<<i) != 0
		if !given && s.env != "" {
			name, text, err := s.lookupEnv(getenv)
			if err != nil {
				return o, err
			}
			if text != "" {
				source = fmt.Sprintf("%s=%q", name, text)
				if err := s.value.parse(&o, text); err != nil {
					return o, fmt.Errorf("%s: %w", source, err)
				}
			}
		}
		if err := s.value.check(&o); err != nil {
			return o, fmt.Errorf("%s: %w", source, err)
		}
	}
	return o, nil
}

// A setting is one field of Options: where else it may come from, how its
// text reads, and what it must be. RegisterFlags and resolve both walk
// the table, so a setting cannot have a flag that reads differently from
// its variable.
type setting struct {
	field  string // the Options field
	flag   string // the flag's name, without "-"; "" when only code sets it
	env    string // the environment variable; "" when only code sets it
	legacy string // an older name of env, still read; "" when none
	usage  string // the flag's help
	value  value
}

// settings lists every field of Options (a test checks that none is
// missing), in the order resolve checks them.
var settings = []setting{{
	field: "Flavor", flag: "rtapi.flavor", env: "RTAPI_FLAVOR",
	usage: "RTAPI `flavor`: auto, posix, rt-preempt or sim",
	value: field[string]{at: func(o *Options) *string { return &o.Flavor },
		unset: isZero[string], decode: parseText, verify: checkFlavor, text: formatText},
}, {
	field: "VanillaFIFO", flag: "rtapi.vanilla-fifo", env: "RTAPI_VANILLA_FIFO",
	usage: "on a non-RT kernel, run tasks SCHED_FIFO woken by POSIX timers",
	value: toggle(func(o *Options) *Toggle { return &o.VanillaFIFO }, true),
}, {
	field: "Strict", flag: "rtapi.strict", env: "RTAPI_STRICT",
	usage: "refuse to run degraded, e.g. without SCHED_FIFO",
	value: toggle(func(o *Options) *Toggle { return &o.Strict }, true),
}, {
	field: "Logger",
	value: field[*zap.Logger]{at: func(o *Options) **zap.Logger { return &o.Logger },
		unset: isZero[*zap.Logger], verify: defaultLogger},
}, {
	field: "CPUs", flag: "rtapi.cpu", env: "RTAPI_CPU",
	usage: "a `list` of CPUs for real-time tasks, e.g. 1, 2,3 or 0-3",
	value: field[[]int]{at: func(o *Options) *[]int { return &o.CPUs },
		unset: isEmpty, decode: parseCPUs, verify: copyCPUs, text: kerneldetect.FormatCPUList},
}, {
	field: "LockMemory", flag: "rtapi.lock-memory", env: "RTAPI_LOCK_MEMORY",
	usage: "mlockall on real-time flavors: `auto|on|off`",
	value: toggle(func(o *Options) *Toggle { return &o.LockMemory }, false),
}, {
	field: "Instance", flag: "rtapi.instance", env: "RTAPI_INSTANCE",
	usage: "instance `number` of this host's shared memory",
	value: field[int]{at: func(o *Options) *int { return &o.Instance },
		unset: isZero[int], decode: parseInt, verify: checkInstance, text: strconv.Itoa},
}, {
	field: "ShmGroup", flag: "rtapi.shm-group", env: "RTAPI_SHM_GROUP",
	usage: "share shared-memory segments with this `group`, a name or gid",
	value: field[string]{at: func(o *Options) *string { return &o.ShmGroup },
		unset: isZero[string], decode: parseText, text: formatText},
}, {
	field: "ShmAllowUIDs",
	value: field[[]int]{at: func(o *Options) *[]int { return &o.ShmAllowUIDs }, unset: isEmpty},
}, {
	field: "Kernel",
	value: field[*kerneldetect.Report]{at: func(o *Options) **kerneldetect.Report { return &o.Kernel },
		unset: isZero[*kerneldetect.Report]},
}, {
	field: "HistogramBound", flag: "rtapi.histogram-bound", env: "RTAPI_HISTOGRAM_BOUND",
	usage: "default bound of each task's latency histogram, a `duration` such as 10ms",
	value: field[time.Duration]{at: func(o *Options) *time.Duration { return &o.HistogramBound },
		unset: isZero[time.Duration], decode: parseDuration, verify: checkHistogramBound, text: time.Duration.String},
}, {
	field: "StopTimeout", flag: "rtapi.stop-timeout", env: "RTAPI_STOP_TIMEOUT",
	usage: "how long Close waits for each task to stop, a `duration` such as 2s",
	value: field[time.Duration]{at: func(o *Options) *time.Duration { return &o.StopTimeout },
		unset: isZero[time.Duration], decode: parseDuration, verify: checkStopTimeout, text: time.Duration.String},
}, {
	field: "Sim",
	value: field[*SimOptions]{at: func(o *Options) **SimOptions { return &o.Sim }, unset: isZero[*SimOptions]},
}, {
	field: "TimerSignal", flag: "rtapi.timer-signal", env: "RTAPI_TIMER_SIGNAL",
	usage: "real-time `signal` of the posix-timer wake mode, 34 to 64",
	value: field[int]{at: func(o *Options) *int { return &o.TimerSignal },
		unset: isZero[int], decode: parseInt, verify: checkTimerSignal, text: strconv.Itoa},
}, {
	field: "GCShield", flag: "rtapi.gc-shield", env: "RTAPI_GC_SHIELD", legacy: "GORTAPI_GC_SHIELD",
	usage: "GC shield of tasks that leave it auto: `auto|on|off`",
	value: toggle(func(o *Options) *Toggle { return &o.GCShield }, false),
}, {
	field: "SpinGuard", flag: "rtapi.spin-guard", env: "RTAPI_SPIN_GUARD",
	usage: "bound task threads' spins with a guard process: `auto|on|off`",
	value: toggle(func(o *Options) *Toggle { return &o.SpinGuard }, false),
}, {
	field: "SpareProcs", flag: "rtapi.spare-procs", env: "RTAPI_SPARE_PROCS",
	usage: "raise GOMAXPROCS by one per running task: `auto|on|off`",
	value: toggle(func(o *Options) *Toggle { return &o.SpareProcs }, false),
}}

// lookupEnv reads the setting's variable and, where it has one, its older
// name: one of them set, or both to the same value, gives that; both set
// to different values is an error.
func (s setting) lookupEnv(getenv func(string) string) (name, text string, err error) {
	text = getenv(s.env)
	if s.legacy == "" {
		return s.env, text, nil
	}
	old := getenv(s.legacy)
	switch {
	case old == "":
		return s.env, text, nil
	case text == "":
		return s.legacy, old, nil
	}
	// Compare what they mean, so that "0" and "off" agree.
	var current, older Options
	if err := s.value.parse(&current, text); err != nil {
		return "", "", fmt.Errorf("%s=%q: %w", s.env, text, err)
	}
	if err := s.value.parse(&older, old); err != nil {
		return "", "", fmt.Errorf("%s=%q: %w", s.legacy, old, err)
	}
	if s.value.format(&current) != s.value.format(&older) {
		return "", "", fmt.Errorf("%s=%q and %s=%q (its older name) disagree; set one of them: %w",
			s.env, text, s.legacy, old, ErrInvalid)
	}
	return s.env, text, nil
}

// settingFlag is the flag.Value of settings[i], writing o.
type settingFlag struct {
	o *Options
	i int
}

// String gives the field as text, "" when it is unset (or for the zero
// settingFlag the flag package makes to find the default).
func (f settingFlag) String() string {
	if f.o == nil || !settings[f.i].value.isSet(f.o) {
		return ""
	}
	return settings[f.i].value.format(f.o)
}

// Set parses and checks s, and marks the field as given even when s is
// its zero value.
func (f settingFlag) Set(s string) error {
	v := settings[f.i].value
	o := *f.o
	if err := v.parse(&o, s); err != nil {
		return err
	}
	if err := v.check(&o); err != nil {
		return err
	}
	*f.o = o
	f.o.flagged |= 1 << f.i
	return nil
}

// IsBoolFlag lets a yes/no flag stand alone: -rtapi.strict is
// -rtapi.strict=on.
func (f settingFlag) IsBoolFlag() bool { return settings[f.i].value.isBool() }

// value is a setting's field, seen through its type.
type value interface {
	isSet(o *Options) bool
	// parse sets the field from text; check then validates it, filling
	// in its default when unset.
	parse(o *Options, s string) error
	check(o *Options) error
	format(o *Options) string
	isBool() bool
}

// field is the value of a field of type T.
type field[T any] struct {
	at     func(*Options) *T
	unset  func(T) bool
	decode func(string) (T, error) // nil for a setting only code sets
	verify func(T) (T, error)      // the value to use; nil: any value as it is
	text   func(T) string          // nil for a setting only code sets
	// boolean marks a yes/no flag, which may stand alone.
	boolean bool
}

func (f field[T]) isSet(o *Options) bool { return !f.unset(*f.at(o)) }
func (f field[T]) isBool() bool          { return f.boolean }

func (f field[T]) parse(o *Options, s string) error {
	v, err := f.decode(s)
	if err != nil {
		return err
	}
	*f.at(o) = v
	return nil
}

func (f field[T]) check(o *Options) error {
	if f.verify == nil {
		return nil
	}
	v, err := f.verify(*f.at(o))
	if err != nil {
		return err
	}
	*f.at(o) = v
	return nil
}

func (f field[T]) format(o *Options) string { return f.text(*f.at(o)) }

func toggle(at func(*Options) *Toggle, boolean bool) field[Toggle] {
	return field[Toggle]{at: at, unset: isZero[Toggle], decode: parseToggle,
		verify: checkToggle, text: Toggle.String, boolean: boolean}
}

func isZero[T comparable](v T) bool {
	var zero T
	return v == zero
}

func isEmpty(v []int) bool { return len(v) == 0 }

func parseText(s string) (string, error) { return s, nil }
func formatText(s string) string         { return s }

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

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer: %w", s, ErrInvalid)
	}
	return n, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 10ms: %w", s, ErrInvalid)
	}
	return d, nil
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

func checkTimerSignal(n int) (int, error) { return backend.ResolveTimerSignal(n) }

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
