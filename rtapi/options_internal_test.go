package rtapi

import (
	"flag"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/kerneldetect"
)

// A resolverCase is one setting that has a flag and a variable, with two
// valid values, an explicit zero value and a bad one, as text and as what
// the field then holds.
type resolverCase struct {
	field string
	texts [2]string // two valid values, as the flag or variable reads them
	wants [2]any    // what the field holds for each
	// zeroText is the flag's zero value, given explicitly; zeroWant is the
	// field after resolution (for a setting with a default, the default).
	zeroText string
	zeroWant any
	unset    any    // the field when no source sets it
	bad      string // a value the flag and the variable refuse
}

var resolverCases = []resolverCase{
	{field: "Flavor", texts: [2]string{"posix", "sim"}, wants: [2]any{"posix", "sim"},
		zeroText: "", zeroWant: "", unset: "", bad: "nonsense"},
	{field: "VanillaFIFO", texts: [2]string{"false", "1"}, wants: [2]any{Off, On},
		zeroText: "auto", zeroWant: Auto, unset: Auto, bad: "perhaps"},
	{field: "Strict", texts: [2]string{"false", "1"}, wants: [2]any{Off, On},
		zeroText: "auto", zeroWant: Auto, unset: Auto, bad: "2x"},
	{field: "CPUs", texts: [2]string{"1", "2-3"}, wants: [2]any{[]int{1}, []int{2, 3}},
		zeroText: "", zeroWant: []int(nil), unset: []int(nil), bad: "0-20000000"},
	{field: "LockMemory", texts: [2]string{"off", "on"}, wants: [2]any{Off, On},
		zeroText: "auto", zeroWant: Auto, unset: Auto, bad: "sometimes"},
	{field: "Instance", texts: [2]string{"3", "5"}, wants: [2]any{3, 5},
		zeroText: "0", zeroWant: 0, unset: 0, bad: "-4"},
	{field: "ShmGroup", texts: [2]string{"adm", "65534"}, wants: [2]any{"adm", "65534"},
		zeroText: "", zeroWant: "", unset: ""},
	{field: "HistogramBound", texts: [2]string{"1ms", "2ms"}, wants: [2]any{time.Millisecond, 2 * time.Millisecond},
		zeroText: "0", zeroWant: DefaultHistogramBound, unset: DefaultHistogramBound, bad: "1ns"},
	{field: "StopTimeout", texts: [2]string{"1s", "3s"}, wants: [2]any{time.Second, 3 * time.Second},
		zeroText: "0s", zeroWant: DefaultStopTimeout, unset: DefaultStopTimeout, bad: "-1s"},
	{field: "TimerSignal", texts: [2]string{"41", "42"}, wants: [2]any{41, 42},
		zeroText: "0", zeroWant: DefaultTimerSignal, unset: DefaultTimerSignal, bad: "99"},
	{field: "RuntimeGuard", texts: [2]string{"no", "yes"}, wants: [2]any{Off, On},
		zeroText: "auto", zeroWant: Auto, unset: Auto, bad: "sometimes"},
}

func settingOf(t *testing.T, field string) setting {
	t.Helper()
	i := slices.IndexFunc(settings, func(s setting) bool { return s.Field == field })
	require.GreaterOrEqual(t, i, 0, "no setting for Options.%s", field)
	return settings[i]
}

// env is a fake environment that records what was read.
type env map[string]string

func (e env) getenv(name string) string { return e[name] }

func fieldValue(o Options, field string) any {
	return reflect.ValueOf(o).FieldByName(field).Interface()
}

func setField(o *Options, field string, v any) {
	reflect.ValueOf(o).Elem().FieldByName(field).Set(reflect.ValueOf(v))
}

// TestResolveEverySettingFromEverySource resolves each setting from each
// combination of sources: code, flag, environment, default. The first
// present wins, and a flag given explicitly wins even with its zero value.
func TestResolveEverySettingFromEverySource(t *testing.T) {
	for _, c := range resolverCases {
		s := settingOf(t, c.field)
		flagArg := func(text string) string { return "-" + s.Flag + "=" + text }
		scenarios := []struct {
			name   string
			before any      // set in code before the flags are parsed
			flags  []string // command line
			after  any      // set in code after the flags are parsed
			env    env
			want   any
		}{
			{name: "nothing: the default", want: c.unset},
			{name: "environment", env: env{s.Env: c.texts[0]}, want: c.wants[0]},
			{name: "flag", flags: []string{flagArg(c.texts[0])}, want: c.wants[0]},
			{name: "flag beats environment", flags: []string{flagArg(c.texts[0])},
				env: env{s.Env: c.texts[1]}, want: c.wants[0]},
			{name: "flag explicitly zero beats environment", flags: []string{flagArg(c.zeroText)},
				env: env{s.Env: c.texts[1]}, want: c.zeroWant},
			{name: "code beats flag", flags: []string{flagArg(c.texts[0])}, after: c.wants[1], want: c.wants[1]},
			{name: "code beats environment", after: c.wants[1], env: env{s.Env: c.texts[0]}, want: c.wants[1]},
			{name: "code beats flag and environment", flags: []string{flagArg(c.texts[0])},
				env: env{s.Env: c.texts[0]}, after: c.wants[1], want: c.wants[1]},
			{name: "a default set in code before parsing yields to the flag", before: c.wants[0],
				flags: []string{flagArg(c.texts[1])}, want: c.wants[1]},
			{name: "a default set in code before parsing beats environment", before: c.wants[0],
				env: env{s.Env: c.texts[1]}, want: c.wants[0]},
		}
		for _, sc := range scenarios {
			t.Run(c.field+"/"+sc.name, func(t *testing.T) {
				fs := flag.NewFlagSet("test", flag.ContinueOnError)
				fs.SetOutput(io.Discard)
				o := RegisterFlags(fs)
				if sc.before != nil {
					setField(o, c.field, sc.before)
				}
				require.NoError(t, fs.Parse(sc.flags))
				if sc.after != nil {
					setField(o, c.field, sc.after)
				}
				got, err := o.resolve(sc.env.getenv)
				require.NoError(t, err)
				require.Equal(t, sc.want, fieldValue(got, c.field))
			})
		}
	}
}

// A bad value in a variable or a flag is ErrInvalid naming it.
func TestResolveRefusesBadValues(t *testing.T) {
	for _, c := range resolverCases {
		if c.bad == "" {
			continue // any text is a group name; it is checked when a segment is made
		}
		s := settingOf(t, c.field)
		t.Run(c.field, func(t *testing.T) {
			_, err := Options{}.resolve(env{s.Env: c.bad}.getenv)
			require.ErrorIs(t, err, ErrInvalid)
			require.Contains(t, err.Error(), s.Env)

			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o := RegisterFlags(fs)
			err = fs.Parse([]string{"-" + s.Flag + "=" + c.bad})
			require.Error(t, err)
			require.Contains(t, err.Error(), "-"+s.Flag)
			require.ErrorIs(t, fs.Set(s.Flag, c.bad), ErrInvalid, "the flag's own error")
			require.True(t, reflect.ValueOf(*o).FieldByName(c.field).IsZero(), "a refused value leaves the field as it was")
		})
	}
}

// Values set in code are checked too, and the error names the field.
func TestResolveRefusesBadCode(t *testing.T) {
	for _, o := range []Options{
		{Flavor: "nonsense"}, {VanillaFIFO: 2}, {Strict: -5}, {LockMemory: 7}, {RuntimeGuard: 3},
		{Instance: -1}, {HistogramBound: time.Nanosecond}, {HistogramBound: -time.Second},
		{StopTimeout: -time.Second}, {TimerSignal: 33}, {TimerSignal: 65},
	} {
		_, err := o.resolve(env{}.getenv)
		require.ErrorIs(t, err, ErrInvalid, "%+v", o)
		require.Contains(t, err.Error(), "Options.")
	}
}

// A yes/no flag may stand alone; one that takes auto, on or off may be
// followed by its value as the next argument.
func TestResolveFlagSpellings(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"-rtapi.strict", "-rtapi.vanilla-fifo", "-rtapi.lock-memory", "off",
		"-rtapi.runtime-guard", "on", "-rtapi.timer-signal", "50"}))
	require.Equal(t, On, o.Strict)
	require.Equal(t, On, o.VanillaFIFO)
	require.Equal(t, Off, o.LockMemory)
	require.Equal(t, On, o.RuntimeGuard)
	require.Equal(t, 50, o.TimerSignal)
	require.Equal(t, "on", fs.Lookup("rtapi.strict").Value.String())
	require.Equal(t, "", fs.Lookup("rtapi.instance").Value.String(), "an unset field has no text")
}

// The settings that only code sets: their defaults, and no flag or
// variable reaches them.
func TestResolveCodeOnlySettings(t *testing.T) {
	got, err := Options{}.resolve(env{}.getenv)
	require.NoError(t, err)
	require.NotNil(t, got.Logger, "nil Logger: a no-op one")
	require.Nil(t, got.Kernel, "nil Kernel: Open detects")
	require.Nil(t, got.Sim)
	require.Nil(t, got.ShmAllowUIDs)
	for _, field := range []string{"Logger", "Kernel", "Sim", "ShmAllowUIDs"} {
		s := settingOf(t, field)
		require.Empty(t, s.Flag+s.Env, field)
	}
}

// Open reads exactly the variables the table names, and the table covers
// every field of Options.
func TestSettingsCoverOptions(t *testing.T) {
	typ := reflect.TypeFor[Options]()
	var fields []string
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() {
			fields = append(fields, f.Name)
		}
	}
	var listed []string
	for _, s := range settings {
		listed = append(listed, s.Field)
	}
	require.ElementsMatch(t, fields, listed, "every field of Options has one row in settings")
	require.Less(t, len(settings), 32, "flagged has a bit for each setting")

	read := map[string]bool{}
	_, err := Options{}.resolve(func(name string) string { read[name] = true; return "" })
	require.NoError(t, err)
	var want []string
	for _, s := range settings {
		if s.Env != "" {
			want = append(want, s.Env)
		}
	}
	require.ElementsMatch(t, want, slices.Collect(maps.Keys(read)))
}

// The documentation names every flag and variable: Options' doc comment
// and the README.
func TestSettingsDocumented(t *testing.T) {
	src, err := os.ReadFile("options.go")
	require.NoError(t, err)
	doc, _, ok := strings.Cut(string(src), "type Options struct")
	require.True(t, ok)
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	for _, s := range settings {
		require.True(t, strings.Contains(doc, s.Field), "Options' doc table lacks %s", s.Field)
		for _, name := range []string{"-" + s.Flag, s.Env} {
			if name == "" || name == "-" {
				continue
			}
			require.True(t, strings.Contains(doc, name), "Options' doc lacks %s", name)
			require.True(t, strings.Contains(string(readme), name), "README.md lacks %s", name)
		}
	}
}

// Open resolves the settings it is given from the environment, the new
// ones included.
func TestOpenReadsTheEnvironment(t *testing.T) {
	t.Setenv("RTAPI_TIMER_SIGNAL", "41")
	t.Setenv("RTAPI_RUNTIME_GUARD", "on")
	t.Setenv("RTAPI_STOP_TIMEOUT", "3s")
	t.Setenv("RTAPI_HISTOGRAM_BOUND", "2ms")
	rt, err := Open(Options{Flavor: "posix", LockMemory: Off})
	require.NoError(t, err)
	defer rt.Close()
	require.Equal(t, 41, rt.opts.TimerSignal)
	require.Equal(t, On, rt.opts.RuntimeGuard)
	require.Equal(t, 3*time.Second, rt.opts.StopTimeout)
	require.Equal(t, 2*time.Millisecond, rt.opts.HistogramBound)
	task, err := rt.NewTask(TaskSpec{Name: "t", Period: time.Millisecond}, func(tc *TaskContext) error { return nil })
	require.NoError(t, err)
	require.Equal(t, 2*time.Millisecond, task.spec.HistogramBound, "the instance's bound is each task's default")
	require.True(t, rt.guardOn(), "RuntimeGuard on: the guard's steps apply even on posix")
}

func TestRegisterFlagsMisuse(t *testing.T) {
	require.PanicsWithValue(t, "rtapi.RegisterFlags: nil FlagSet (use flag.CommandLine for the program's flags)",
		func() { RegisterFlags(nil) })
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	RegisterFlags(fs)
	require.Panics(t, func() { RegisterFlags(fs) }, "the flags twice on one FlagSet")
}

// A monitor registers only the shared-memory flags: -rtapi.flavor and the
// other task settings are refused, not accepted and ignored.
func TestRegisterShmFlags(t *testing.T) {
	fs := flag.NewFlagSet("halmon", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := RegisterShmFlags(fs)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	require.ElementsMatch(t, []string{"rtapi.instance", "rtapi.shm-group"}, names)
	require.NoError(t, fs.Parse([]string{"-rtapi.instance", "3", "-rtapi.shm-group", "hal"}))
	require.Equal(t, 3, o.Instance)
	require.Equal(t, "hal", o.ShmGroup)
	for _, other := range []string{"-rtapi.flavor=posix", "-rtapi.strict=on", "-rtapi.cpu=1"} {
		fs := flag.NewFlagSet("halmon", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		RegisterShmFlags(fs)
		require.Error(t, fs.Parse([]string{other}), other)
	}
	require.Panics(t, func() { RegisterShmFlags(nil) })
	require.Panics(t, func() { RegisterShmFlags(fs) }, "twice on one FlagSet")
}

// The flavor gets every setting resolved: an unset Options gives the
// defaults, and each Toggle maps to the value Options' doc gives it.
func TestBackendConfig(t *testing.T) {
	t.Parallel()
	kernel := &kerneldetect.Report{}
	o, err := Options{}.resolve(env{}.getenv)
	require.NoError(t, err)
	cfg := o.backendConfig(kernel)
	require.Same(t, kernel, cfg.Kernel)
	require.False(t, cfg.VanillaFIFO)
	require.False(t, cfg.Strict)
	require.Equal(t, backend.LockIfUnlimited, cfg.LockMemory)
	require.NotNil(t, cfg.Logger)
	require.Equal(t, DefaultTimerSignal, cfg.TimerSignal)

	o, err = Options{VanillaFIFO: On, Strict: On, LockMemory: On, TimerSignal: 41}.resolve(env{}.getenv)
	require.NoError(t, err)
	cfg = o.backendConfig(kernel)
	require.True(t, cfg.VanillaFIFO)
	require.True(t, cfg.Strict)
	require.Equal(t, backend.LockAlways, cfg.LockMemory)
	require.Equal(t, 41, cfg.TimerSignal)

	o, err = Options{VanillaFIFO: Off, Strict: Off, LockMemory: Off}.resolve(env{"RTAPI_STRICT": "1", "RTAPI_VANILLA_FIFO": "1"}.getenv)
	require.NoError(t, err)
	cfg = o.backendConfig(kernel)
	require.False(t, cfg.VanillaFIFO, "Off in code beats the environment")
	require.False(t, cfg.Strict)
	require.Equal(t, backend.LockNever, cfg.LockMemory)
}
