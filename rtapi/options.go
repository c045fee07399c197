package rtapi

import (
	"flag"
	"fmt"
	"os"
	"reflect"
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
// the running kernel, memory is locked where that is safe, only warnings
// and errors are logged, to stderr.
//
// Most settings can also be given as a flag (RegisterFlags) or an
// environment variable. Each setting takes the first of: the field (a
// zero field is unset, except one its flag wrote: -rtapi.strict=false
// beats RTAPI_STRICT=1); the variable, when non-empty; the default or what
// Open detects. In code, a Toggle set to Off beats the variable.
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
//	RuntimeGuard    -rtapi.runtime-guard    RTAPI_RUNTIME_GUARD    on for real-time flavors
//	Logger, ShmAllowUIDs, Kernel, Sim: code only
//
// Yes/no values are auto, on or off (or
// 1, 0, true, false, yes, no); durations Go's syntax (10ms); CPU lists the
// kernel's (0-3,8). A bad value is an error matching ErrInvalid that names
// the flag or variable, from flag.FlagSet.Parse or Open.
type Options struct {
	// Flavor names the backend: "" or "auto" (the best that can run here),
	// "posix", "rt-preempt", "sim"; any other name is ErrInvalid. "sim"
	// without an import of package rtapi/sim is ErrNotSupported.
	Flavor string
	// VanillaFIFO On makes the posix flavor run tasks SCHED_FIFO on a
	// kernel that is not real-time, each woken by a POSIX timer aimed at
	// its thread. Auto and Off: SCHED_OTHER.
	VanillaFIFO Toggle
	// Strict On makes Open or Start fail instead of warning when it would
	// run degraded: SCHED_FIFO refused, or a Xenomai or RTAI kernel, which
	// has no native backend here. Auto and Off: warn and run.
	Strict Toggle
	// Logger receives set-up messages and what task bodies log through
	// MsgLogger. nil: warnings (the program runs other than asked) and
	// errors to stderr; zap.NewNop() silences them.
	Logger *zap.Logger
	// CPUs are the CPUs of tasks whose TaskSpec.CPU is CPUAuto. Empty: the
	// highest isolated CPU of the process's cpuset, else unpinned. Each
	// must be below kerneldetect.MaxCPU, online and in the process's cpuset
	// (isolated CPUs included): ErrInvalid otherwise. Open copies the slice.
	CPUs []int
	// LockMemory controls mlockall (MCL_ONFAULT for later mappings) on
	// real-time flavors. Auto locks when the process may lock without limit
	// (root, CAP_IPC_LOCK or an unlimited RLIMIT_MEMLOCK). The lock is the
	// process's: the last Close of an RT that asked for it undoes it,
	// unless the program had locked memory itself.
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
	// histogram (1 µs buckets). Zero: DefaultHistogramBound. Below 1 µs
	// or more buckets than a histogram holds: ErrInvalid.
	HistogramBound time.Duration
	// StopTimeout bounds how long Close waits for each task to stop.
	// Zero: DefaultStopTimeout. Negative: ErrInvalid.
	StopTimeout time.Duration
	// Sim configures the sim flavor; other flavors ignore it. nil:
	// SimOptions' defaults.
	Sim *SimOptions
	// TimerSignal is the real-time signal the posix-timer wake mode's
	// timers send to their task thread, which blocks it. Zero:
	// DefaultTimerSignal. Outside 34 (SIGRTMIN) to 64 (SIGRTMAX) it is
	// ErrInvalid; pick one the program does not use. Instances sent to the
	// process still reach it.
	TimerSignal int
	// RuntimeGuard keeps real-time tasks on time in a Go process that
	// allocates, and bounds the Go runtime's livelocks: each task holds a
	// P of its own while tasks run, the process's other threads run at
	// SCHED_FIFO 1 until they keep a CPU busy (the processes it starts
	// meanwhile start SCHED_OTHER), a SCHED_FIFO task below the highest
	// task priority of the process sleeps at that priority and takes its
	// own again once it runs (the wake-up ceiling: no task preempts
	// another inside the Go runtime's wake-up path, where it can hold the
	// other's goroutine), and a guard process demotes a task thread that
	// keeps its CPU without a break or a completed cycle (docs/GC.md, "The
	// runtime guard", "The wake-up ceiling"). Auto: on for real-time flavors, with a warning when
	// the guard process cannot start; On: Start fails then; Off: none of
	// it, for measurements (TaskSpec.Watchdog still applies). With Off,
	// tasks pinned to one CPU (TaskSpec.CPU) can livelock on Go 1.26: a
	// task spins in the runtime until its CPU's ordinary threads run again
	// (docs/GC.md, "Where the C side runs", item 4).
	RuntimeGuard Toggle

	// flagged has bit i set when settings[i]'s flag was given.
	flagged uint32
}

// RegisterFlags registers on fs the flags of Options' table and returns
// the Options they fill in when fs is parsed. A bad value makes fs.Parse
// fail, naming the flag. Fields set on the result after parsing beat the
// flags. A nil fs, or one that already has these flags, panics.
//
// -rtapi.flavor sim (or RTAPI_FLAVOR=sim) runs tasks only while package
// rtapi/sim advances the virtual clock: in a program that does not use
// it, RT.Run returns ErrNotSupported and RT.Close warns.
func RegisterFlags(fs *flag.FlagSet) *Options {
	return registerFlags("RegisterFlags", fs, func(string) bool { return true })
}

// RegisterShmFlags is RegisterFlags for a program that only opens a
// host's shared memory (a monitor): it registers -rtapi.instance and
// -rtapi.shm-group only. A nil fs, or one that has them, panics.
func RegisterShmFlags(fs *flag.FlagSet) *Options {
	return registerFlags("RegisterShmFlags", fs, func(field string) bool { return field == "Instance" || field == "ShmGroup" })
}

func registerFlags(name string, fs *flag.FlagSet, want func(field string) bool) *Options {
	if fs == nil {
		panic("rtapi." + name + ": nil FlagSet (use flag.CommandLine for the program's flags)")
	}
	o := &Options{}
	for i, s := range settings {
		if s.Flag != "" && want(s.Field) {
			fs.Var(flagValue{o, i}, s.Flag, s.Usage+" (env "+s.Env+")")
		}
	}
	return o
}

// resolve returns o with every setting resolved as Options' doc says
// (the environment read with getenv) and checked. An error names the
// field or variable and its text.
func (o Options) resolve(getenv func(string) string) (Options, error) {
	for i, s := range settings {
		source := "Options." + s.Field
		if !s.isSet(&o) && o.flagged&(1<<i) == 0 && s.Env != "" {
			if text := getenv(s.Env); text != "" {
				source = fmt.Sprintf("%s=%q", s.Env, text)
				if err := s.parse(&o, text); err != nil {
					return o, fmt.Errorf("%s: %w", source, err)
				}
			}
		}
		if err := s.check(&o); err != nil {
			return o, fmt.Errorf("%s: %w", source, err)
		}
	}
	return o, nil
}

// flagValue is the flag.Value of settings[i], writing o.
type flagValue struct {
	o *Options
	i int
}

// String gives the field as text, "" when unset or for a zero flagValue.
func (f flagValue) String() string {
	if f.o == nil || !settings[f.i].isSet(f.o) {
		return ""
	}
	return settings[f.i].text(f.o)
}

// Set parses and checks text and marks the field as given, so that a
// zero value counts.
func (f flagValue) Set(text string) error {
	s, o := settings[f.i], *f.o
	if err := s.parse(&o, text); err != nil {
		return err
	}
	if err := s.check(&o); err != nil {
		return err
	}
	*f.o = o
	f.o.flagged |= 1 << f.i
	return nil
}

// IsBoolFlag lets a yes/no flag stand alone (-rtapi.strict).
func (f flagValue) IsBoolFlag() bool { return settings[f.i].Bool }

// setting is one field of Options: its flag and variable, how its text
// reads and what it must be. RegisterFlags and resolve share the table.
type setting struct {
	Field, Flag, Env, Usage string // Flag and Env are "" when only code sets it
	Bool                    bool   // a yes/no flag, which may stand alone

	isSet func(*Options) bool          // the field is not unset (zero or empty)
	parse func(*Options, string) error // sets the field from text
	check func(*Options) error         // validates the field, filling in its default
	text  func(*Options) string        // the field as text
}

// field gives s with the accessors of the field at: decode and text are
// nil for a field only code sets, verify (the value to use) nil for any.
func field[T any](s setting, at func(*Options) *T, decode func(string) (T, error), verify func(T) (T, error), text func(T) string) setting {
	s.isSet = func(o *Options) bool {
		v := reflect.ValueOf(at(o)).Elem()
		return !v.IsZero() && (v.Kind() != reflect.Slice || v.Len() > 0)
	}
	s.parse = func(o *Options, str string) error {
		v, err := decode(str)
		if err == nil {
			*at(o) = v
		}
		return err
	}
	s.check = func(o *Options) (err error) {
		if verify != nil {
			*at(o), err = verify(*at(o))
		}
		return err
	}
	s.text = func(o *Options) string { return text(*at(o)) }
	return s
}

// settings lists every field of Options, in the order resolve checks
// them; at most 32, one bit each in Options.flagged.
var settings = []setting{
	field(setting{Field: "Flavor", Flag: "rtapi.flavor", Env: "RTAPI_FLAVOR",
		Usage: "RTAPI `flavor`: auto, posix, rt-preempt or sim"},
		func(o *Options) *string { return &o.Flavor }, parseText, checkFlavor, same),
	toggle(setting{Field: "VanillaFIFO", Flag: "rtapi.vanilla-fifo", Env: "RTAPI_VANILLA_FIFO", Bool: true,
		Usage: "on a non-RT kernel, run tasks SCHED_FIFO woken by POSIX timers"},
		func(o *Options) *Toggle { return &o.VanillaFIFO }),
	toggle(setting{Field: "Strict", Flag: "rtapi.strict", Env: "RTAPI_STRICT", Bool: true,
		Usage: "refuse to run degraded, e.g. without SCHED_FIFO"},
		func(o *Options) *Toggle { return &o.Strict }),
	field(setting{Field: "Logger"}, func(o *Options) **zap.Logger { return &o.Logger }, nil, defaultLogger, nil),
	field(setting{Field: "CPUs", Flag: "rtapi.cpu", Env: "RTAPI_CPU",
		Usage: "a `list` of CPUs for real-time tasks, e.g. 1, 2,3 or 0-3"},
		func(o *Options) *[]int { return &o.CPUs }, parseCPUs,
		func(cpus []int) ([]int, error) { return slices.Clone(cpus), nil }, // Open checks them
		kerneldetect.FormatCPUList),
	toggle(setting{Field: "LockMemory", Flag: "rtapi.lock-memory", Env: "RTAPI_LOCK_MEMORY",
		Usage: "mlockall on real-time flavors: `auto|on|off`"},
		func(o *Options) *Toggle { return &o.LockMemory }),
	field(setting{Field: "Instance", Flag: "rtapi.instance", Env: "RTAPI_INSTANCE",
		Usage: "instance `number` of this host's shared memory"},
		func(o *Options) *int { return &o.Instance }, parseInt, checkInstance, strconv.Itoa),
	field(setting{Field: "ShmGroup", Flag: "rtapi.shm-group", Env: "RTAPI_SHM_GROUP",
		Usage: "share shared-memory segments with this `group`, a name or gid"},
		func(o *Options) *string { return &o.ShmGroup }, parseText, nil, same),
	field(setting{Field: "ShmAllowUIDs"}, func(o *Options) *[]int { return &o.ShmAllowUIDs }, nil, nil, nil),
	field(setting{Field: "Kernel"}, func(o *Options) **kerneldetect.Report { return &o.Kernel }, nil, nil, nil),
	field(setting{Field: "HistogramBound", Flag: "rtapi.histogram-bound", Env: "RTAPI_HISTOGRAM_BOUND",
		Usage: "default bound of each task's latency histogram, a `duration` such as 10ms"},
		func(o *Options) *time.Duration { return &o.HistogramBound }, parseDuration, checkHistogramBound, time.Duration.String),
	field(setting{Field: "StopTimeout", Flag: "rtapi.stop-timeout", Env: "RTAPI_STOP_TIMEOUT",
		Usage: "how long Close waits for each task to stop, a `duration` such as 2s"},
		func(o *Options) *time.Duration { return &o.StopTimeout }, parseDuration, checkStopTimeout, time.Duration.String),
	field(setting{Field: "Sim"}, func(o *Options) **SimOptions { return &o.Sim }, nil, nil, nil),
	field(setting{Field: "TimerSignal", Flag: "rtapi.timer-signal", Env: "RTAPI_TIMER_SIGNAL",
		Usage: "real-time `signal` of the posix-timer wake mode, 34 to 64"},
		func(o *Options) *int { return &o.TimerSignal }, parseInt, backend.ResolveTimerSignal, strconv.Itoa),
	toggle(setting{Field: "RuntimeGuard", Flag: "rtapi.runtime-guard", Env: "RTAPI_RUNTIME_GUARD",
		Usage: "keep tasks on time beside the Go runtime (docs/GC.md): `auto|on|off`"},
		func(o *Options) *Toggle { return &o.RuntimeGuard }),
}

func toggle(s setting, at func(*Options) *Toggle) setting {
	decode := func(str string) (t Toggle, err error) { err = t.Set(str); return t, err }
	return field(s, at, decode, checkToggle, Toggle.String)
}

func parseText(s string) (string, error) { return s, nil }

func same(s string) string { return s }

// parseInt parses a decimal integer; anything else is ErrInvalid.
func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer: %w", s, ErrInvalid)
	}
	return n, nil
}

// parseDuration parses a Go duration (10ms); anything else is ErrInvalid.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 10ms: %w", s, ErrInvalid)
	}
	return d, nil
}

func checkToggle(t Toggle) (Toggle, error) {
	if !t.Valid() {
		return t, fmt.Errorf("%v is not Auto, On or Off: %w", t, ErrInvalid)
	}
	return t, nil
}

// parseCPUs parses a CPU list ("1", "2,3" or "0-3,6").
func parseCPUs(s string) ([]int, error) {
	cpus, err := kerneldetect.ParseCPUList(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	return cpus, nil
}

func checkFlavor(name string) (string, error) {
	if name == "" || name == "auto" {
		return name, nil
	}
	_, err := backend.Lookup(name)
	return name, err
}

// defaultLogger replaces a nil Options.Logger: warnings and errors, one
// line each, on stderr.
func defaultLogger(l *zap.Logger) (*zap.Logger, error) {
	if l != nil {
		return l, nil
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), zapcore.WarnLevel)), nil
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

// backendConfig gives the resolved settings of o as a flavor takes them.
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
