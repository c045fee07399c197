package comps_test

import (
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// rig loads a .hal text on a fresh sim-flavor HAL; cycles runs the named
// thread n times.
type rig struct {
	t     *testing.T
	h     *hal.HAL
	clock *sim.Controller
}

func load(t *testing.T, src string) *rig {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	cmds, err := halfile.Parse(t.Name()+".hal", strings.NewReader(src))
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	clock, err := sim.New(rt)
	require.NoError(t, err)
	return &rig{t, h, clock}
}

func (r *rig) cycles(thread string, n int) {
	r.t.Helper()
	th, ok := r.h.Thread(thread)
	require.True(r.t, ok)
	if !r.h.Running() {
		require.NoError(r.t, r.h.Start())
	}
	require.NoError(r.t, r.clock.RunCycles(th.Task(), int64(n)))
}

// period is the period of the thread "servo".
func (r *rig) period() time.Duration {
	r.t.Helper()
	th, ok := r.h.Thread("servo")
	require.True(r.t, ok)
	return th.Period()
}

func (r *rig) setp(name string, v any) {
	r.t.Helper()
	require.NoError(r.t, r.h.SetP(name, toString(v)))
}

func toString(v any) string {
	switch v := v.(type) {
	case bool:
		if v {
			return "1"
		}
		return "0"
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return v.(string)
}

func (r *rig) get(name string) float64 {
	r.t.Helper()
	s, err := r.h.View().Read()
	require.NoError(r.t, err)
	for _, p := range s.Pins {
		if p.Name == name {
			switch p.Type {
			case hal.TypeFloat:
				return math.Float64frombits(p.Value)
			case hal.TypeBit:
				return float64(p.Value & 1)
			case hal.TypeS64:
				return float64(int64(p.Value))
			case hal.TypeS32:
				return float64(int32(uint32(p.Value)))
			case hal.TypeU32:
				return float64(uint32(p.Value))
			}
		}
	}
	r.t.Fatalf("no pin %q", name)
	return 0
}

// pinNames lists the pins of instance p, without the prefix, less the
// timing pins of its functions.
func (r *rig) pinNames(p string) []string {
	s, err := r.h.View().Read()
	require.NoError(r.t, err)
	timing := r.functTimes()
	var out []string
	for _, pin := range s.Pins {
		if strings.HasPrefix(pin.Name, p+".") && !timing[pin.Name] {
			out = append(out, strings.TrimPrefix(pin.Name, p+".")+" "+pin.Type.String()+" "+pin.Dir.String())
		}
	}
	sort.Strings(out)
	return out
}

// functTimes names the HAL's timing items of every exported function
// (FUNCT.time, .tmax, .tmax-increased), which hal_export_funct makes.
func (r *rig) functTimes() map[string]bool {
	m := map[string]bool{}
	for _, f := range r.h.Functs() {
		for _, suffix := range []string{".time", ".tmax", ".tmax-increased"} {
			m[f.Name()+suffix] = true
		}
	}
	return m
}

// paramNames lists the parameters of instance p, without the prefix, less
// the timing parameters of its functions.
func (r *rig) paramNames(p string) []string {
	s, err := r.h.View().Read()
	require.NoError(r.t, err)
	timing := r.functTimes()
	var out []string
	for _, par := range s.Params {
		if strings.HasPrefix(par.Name, p+".") && !timing[par.Name] {
			out = append(out, strings.TrimPrefix(par.Name, p+".")+" "+par.Type.String()+" "+par.Dir.String())
		}
	}
	sort.Strings(out)
	return out
}

const servo = "loadrt threads name1=servo period1=1000000\n"

func TestPinNamesAndFunctions(t *testing.T) {
	r := load(t, servo+`
loadrt scale count=2
loadrt sum2 names=adder
loadrt mux2
loadrt and2
loadrt or2
loadrt not
loadrt ddt
loadrt lowpass
loadrt limit3
loadrt siggen
loadrt pid num_chan=1
loadrt sim_motor
`)
	want := map[string][]string{
		"scale.1":   {"gain float IN", "in float IN", "offset float IN", "out float OUT"},
		"adder":     {"in0 float IN", "in1 float IN", "out float OUT"},
		"mux2.0":    {"in0 float IN", "in1 float IN", "out float OUT", "sel bit IN"},
		"and2.0":    {"in0 bit IN", "in1 bit IN", "out bit OUT"},
		"or2.0":     {"in0 bit IN", "in1 bit IN", "out bit OUT"},
		"not.0":     {"in bit IN", "out bit OUT"},
		"ddt.0":     {"in float IN", "out float OUT"},
		"lowpass.0": {"in float IN", "load bit IN", "out float OUT"},
		"limit3.0": {"enable bit IN", "in float IN", "load bit IN", "max float IN", "maxa float IN",
			"maxv float IN", "min float IN", "out float OUT", "smooth-steps u32 IN"},
		"siggen.0": {"amplitude float IN", "clock bit OUT", "cosine float OUT", "frequency float IN",
			"offset float IN", "reset bit IN", "sawtooth float OUT", "sine float OUT", "square float OUT", "triangle float OUT"},
		"pid.0": {"Dgain float IN", "FF0 float IN", "FF1 float IN", "FF2 float IN", "FF3 float IN", "Igain float IN",
			"Pgain float IN", "bias float IN", "command float IN", "command-deriv float IN", "commandD float OUT",
			"commandDD float OUT", "commandDDD float OUT", "deadband float IN", "enable bit IN",
			"error float OUT", "error-previous-target bit IN", "errorD float OUT",
			"errorI float OUT", "feedback float IN", "feedback-deriv float IN", "index-enable bit IN",
			"maxcmdD float IN", "maxcmdDD float IN",
			"maxcmdDDD float IN", "maxerror float IN", "maxerrorD float IN", "maxerrorI float IN", "maxoutput float IN",
			"output float OUT", "saturated bit OUT", "saturated-count s32 OUT", "saturated-s float OUT",
			"tune-cycles u32 I/O", "tune-effort float I/O", "tune-mode bit IN", "tune-start bit I/O", "tune-type u32 I/O",
			"ultimate-gain float OUT", "ultimate-period float OUT"},
		"sim_motor.0": {"command float IN", "counts s64 OUT", "counts-per-unit float IN", "enable bit IN", "gain float IN",
			"position float OUT", "position-fb float OUT", "time-constant float IN", "velocity float OUT"},
	}
	params := map[string][]string{
		"adder":     {"gain0 float RW", "gain1 float RW", "offset float RW"},
		"lowpass.0": {"gain float RW"},
		"scale.0":   nil,
		"pid.0":     nil,
	}
	for p, names := range params {
		assert.Equal(t, names, r.paramNames(p), p)
	}
	for p, names := range want {
		assert.Equal(t, names, r.pinNames(p), p)
	}
	var functs []string
	for _, f := range r.h.Functs() {
		functs = append(functs, f.Name())
	}
	assert.Equal(t, []string{"scale.0", "scale.1", "adder", "mux2.0", "and2.0", "or2.0", "not.0", "ddt.0", "lowpass.0",
		"limit3.0", "siggen.0.update", "pid.0.do-pid-calcs", "sim_motor.0.update"}, functs)
}

// Every default of LinuxCNC's sources: scale's gain is 0 (scale.comp
// gives it none), sum2's gains 1, limit3's maxa 1e7 and smooth-steps 2,
// pid's Pgain 1, error-previous-target TRUE and its tuner's effort and
// cycles. Before, gortapi's scale gain was 1 and limit3's maxa 1e20.
func TestDefaults(t *testing.T) {
	r := load(t, servo+"loadrt scale\nloadrt sum2\nloadrt lowpass\nloadrt limit3\nloadrt siggen\nloadrt pid\n")
	for name, want := range map[string]string{
		"scale.0.gain": "0", "scale.0.offset": "0",
		"sum2.0.gain0": "1", "sum2.0.gain1": "1", "sum2.0.offset": "0",
		"lowpass.0.gain":  "0",
		"limit3.0.enable": "TRUE", "limit3.0.min": "-1e+20", "limit3.0.max": "1e+20", "limit3.0.maxv": "1e+20",
		"limit3.0.maxa": "1e+07", "limit3.0.smooth-steps": "2",
		"siggen.0.frequency": "1", "siggen.0.amplitude": "1", "siggen.0.offset": "0",
		"pid.0.Pgain": "1", "pid.0.Igain": "0", "pid.0.error-previous-target": "TRUE",
		"pid.0.tune-effort": "0.5", "pid.0.tune-cycles": "50", "pid.0.tune-type": "0",
		"pid.2.enable": "FALSE",
	} {
		v, err := r.h.GetP(name)
		require.NoError(t, err, name)
		assert.Equal(t, want, v, name)
	}
}

// count=0 and an empty names= are taken as not given, as halcompile's
// and pid.c's `!count && !names[0]` does: the default instances, or the
// names when count=0 stands beside them. Before, count=0 was refused.
func TestLoadRTCountZeroIsTheDefault(t *testing.T) {
	for src, want := range map[string][]string{
		"loadrt scale count=0":           {"scale.0"},
		"loadrt scale names=":            {"scale.0"},
		"loadrt scale count=0 names=":    {"scale.0"},
		"loadrt scale count=0 names=a,b": {"a", "b"},
		"loadrt pid count=0":             {"pid.0.do-pid-calcs", "pid.1.do-pid-calcs", "pid.2.do-pid-calcs"}, // pid.c: 3 channels
	} {
		rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
		require.NoError(t, err)
		h, err := hal.New(rt, hal.Options{})
		require.NoError(t, err)
		cmds, err := halfile.Parse("x.hal", strings.NewReader(src))
		require.NoError(t, err)
		require.NoError(t, h.Load(io.Discard, cmds), src)
		var got []string // the instances' functions
		for _, f := range h.Functs() {
			got = append(got, f.Name())
		}
		assert.Equal(t, want, got, src)
		require.NoError(t, h.Close())
		require.NoError(t, rt.Close())
	}
}

func TestLoadRTArguments(t *testing.T) {
	for src, want := range map[string]string{
		"loadrt scale count=2 names=a,b": "count= and names= exclude each other",
		"loadrt scale count=-1":          `count="-1": want 0 to 64`,
		"loadrt scale names=a,a":         `name "a" given twice`,
		"loadrt scale frobs=1":           `unknown argument "frobs"`,
		"loadrt nosuch":                  `no component "nosuch" is compiled in`,
		"loadrt scale num_chan=2":        `unknown argument "num_chan"`,
		"loadrt pid num_chan=17":         "invalid number of channels: 17",
		"loadrt siggen names=s0,s1,s2,s3,s4,s5,s6,s7,s8,s9,s10,s11,s12,s13,s14,s15,s16": "invalid number of channels: 17",
		"loadrt pid debug=yes":     `debug="yes" is not an integer`,
		"loadrt threads period1=x": `period1="x" is not an integer`,
		"loadrt threads name1=servo period1=1000000 name2=base period2=50000": "shorter than the base period",
	} {
		rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
		require.NoError(t, err)
		h, err := hal.New(rt, hal.Options{})
		require.NoError(t, err)
		cmds, err := halfile.Parse("x.hal", strings.NewReader(src))
		require.NoError(t, err)
		err = h.Load(io.Discard, cmds)
		assert.ErrorContains(t, err, "x.hal:1: ")
		assert.ErrorContains(t, err, want)
		assert.ErrorIs(t, err, rtapi.ErrInvalid)
		require.NoError(t, h.Close())
		require.NoError(t, rt.Close())
	}
}

// threads takes threads.c's defaults: name1=thread1 period1=1000000,
// no thread 2 or 3, fpN ignored; a thread without a name or a positive
// period is skipped. Before, "loadrt threads" and "loadrt threads
// name1=servo" were refused.
func TestThreadsDefaults(t *testing.T) {
	for line, want := range map[string][]string{
		"loadrt threads":                                    {"thread1 1ms"},
		"loadrt threads name1=servo":                        {"servo 1ms"},
		"loadrt threads period1=250000 fp1=0":               {"thread1 250µs"},
		"loadrt threads name2=base":                         {"thread1 1ms"},
		"loadrt threads period2=50000 name3=x":              {"thread1 1ms"},
		"loadrt threads period1=0":                          nil,
		"loadrt threads name1= period1=5000":                nil,
		"loadrt threads period1=-1 name2=b period2=2000000": {"b 2ms"},
		"loadrt threads name1=fast period1=50000 fp1=0 name2=slow period2=1000000 fp2=1": {"fast 50µs", "slow 1ms"},
	} {
		r := load(t, line+"\n")
		var got []string
		for _, th := range r.h.Threads() {
			got = append(got, th.Name()+" "+th.Period().String())
		}
		assert.Equal(t, want, got, line)
	}
}

func TestArithmetic(t *testing.T) {
	r := load(t, servo+`
loadrt scale
loadrt sum2
loadrt mux2
loadrt ddt
loadrt lowpass
addf scale.0 servo
addf sum2.0 servo
addf mux2.0 servo
addf ddt.0 servo
addf lowpass.0 servo
setp scale.0.in 2
setp scale.0.gain 3
setp scale.0.offset 1
setp sum2.0.in0 1
setp sum2.0.gain0 2
setp sum2.0.in1 3
setp sum2.0.gain1 4
setp sum2.0.offset 0.5
setp mux2.0.in0 10
setp mux2.0.in1 20
setp lowpass.0.in 1
setp lowpass.0.gain 0.5
`)
	r.cycles("servo", 1)
	assert.Equal(t, 7.0, r.get("scale.0.out"))
	assert.Equal(t, 14.5, r.get("sum2.0.out"))
	assert.Equal(t, 10.0, r.get("mux2.0.out"))
	assert.Equal(t, 0.5, r.get("lowpass.0.out"))
	r.setp("mux2.0.sel", true)
	r.setp("ddt.0.in", "0.003")
	r.cycles("servo", 1)
	assert.Equal(t, 20.0, r.get("mux2.0.out"))
	assert.Equal(t, 0.75, r.get("lowpass.0.out"))
	assert.InDelta(t, 3.0, r.get("ddt.0.out"), 1e-12, "0.003 in one 1 ms period")
	r.cycles("servo", 1)
	assert.Zero(t, r.get("ddt.0.out"))
	r.setp("lowpass.0.load", true)
	r.cycles("servo", 1)
	assert.Equal(t, 1.0, r.get("lowpass.0.out"))
}

func TestLogic(t *testing.T) {
	r := load(t, servo+"loadrt and2\nloadrt or2\nloadrt not\naddf and2.0 servo\naddf or2.0 servo\naddf not.0 servo\n")
	for _, c := range []struct{ a, b bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		r.setp("and2.0.in0", c.a)
		r.setp("and2.0.in1", c.b)
		r.setp("or2.0.in0", c.a)
		r.setp("or2.0.in1", c.b)
		r.setp("not.0.in", c.a)
		r.cycles("servo", 1)
		assert.Equal(t, b2f(c.a && c.b), r.get("and2.0.out"))
		assert.Equal(t, b2f(c.a || c.b), r.get("or2.0.out"))
		assert.Equal(t, b2f(!c.a), r.get("not.0.out"))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// siggen at 250 Hz on a 1 ms thread: index steps by 0.25 per cycle. The
// angle is siggen.c's index * 2 * 3.1415927, so sine and cosine are off
// math.Pi's by up to 1e-7 of the amplitude.
func TestSiggen(t *testing.T) {
	r := load(t, servo+"loadrt siggen\naddf siggen.0.update servo\nsetp siggen.0.frequency 250\nsetp siggen.0.amplitude 2\nsetp siggen.0.offset 1\n")
	type wave struct{ square, saw, tri, sine, cosine, clock float64 }
	want := []wave{
		{-1, 0, 1, 3, 1, 0},   // index 0.25
		{-1, 1, -1, 1, -1, 0}, // 0.5
		{3, 2, 1, -1, 1, 1},   // 0.75
		{-1, -1, 3, 1, 3, 0},  // wrapped to 0
	}
	for i, w := range want {
		r.cycles("servo", 1)
		got := wave{r.get("siggen.0.square"), r.get("siggen.0.sawtooth"), r.get("siggen.0.triangle"),
			r.get("siggen.0.sine"), r.get("siggen.0.cosine"), r.get("siggen.0.clock")}
		assert.InDeltaSlice(t, []float64{w.square, w.saw, w.tri, w.sine, w.cosine, w.clock},
			[]float64{got.square, got.saw, got.tri, got.sine, got.cosine, got.clock}, 1e-6, "cycle %d", i)
	}
	r.setp("siggen.0.reset", true)
	r.cycles("servo", 1)
	assert.Equal(t, 1.0, r.get("siggen.0.sawtooth"), "reset holds index at 0.5: sawtooth at offset")
	assert.Equal(t, -1.0, r.get("siggen.0.square"))
	r.setp("siggen.0.reset", false)
	r.setp("siggen.0.frequency", "600")
	r.cycles("servo", 1)
	assert.Equal(t, 500.0, r.get("siggen.0.frequency"), "siggen.c writes the Nyquist limit back")
}

// limit3 keeps out within min/max, its velocity within maxv and its
// acceleration within maxa, and settles on a reachable command.
func TestLimit3(t *testing.T) {
	r := load(t, servo+"loadrt limit3\naddf limit3.0 servo\nsetp limit3.0.maxv 10\nsetp limit3.0.maxa 1000\nsetp limit3.0.max 0.5\n")
	const dt = 0.001
	r.setp("limit3.0.in", "1")
	var prev, prevV float64
	for i := range 400 {
		r.cycles("servo", 1)
		out := r.get("limit3.0.out")
		v := (out - prev) / dt
		require.LessOrEqual(t, out, 0.5+1e-12, "cycle %d", i)
		require.LessOrEqual(t, math.Abs(v), 10+1e-6, "cycle %d: velocity", i)
		require.LessOrEqual(t, math.Abs(v-prevV)/dt, 1000+1e-3, "cycle %d: acceleration", i)
		prev, prevV = out, v
	}
	assert.Equal(t, 0.5, prev, "settled at max")
	r.setp("limit3.0.in", "-0.25")
	r.setp("limit3.0.load", true)
	r.cycles("servo", 1)
	assert.Equal(t, -0.25, r.get("limit3.0.out"), "load jumps")
}

// The pid terms of one cycle, worked by hand from pid(9), with the error
// measured against the current command (error-previous-target FALSE).
func TestPID(t *testing.T) {
	r := load(t, servo+`loadrt pid count=1
addf pid.0.do-pid-calcs servo
setp pid.0.error-previous-target FALSE
setp pid.0.Pgain 2
setp pid.0.Igain 10
setp pid.0.Dgain 0.001
setp pid.0.FF1 0.5
setp pid.0.command 1
setp pid.0.enable 1
`)
	r.cycles("servo", 1)
	// e = 1, errorI = 0.001, errorD = 1000, commandD = 1000
	assert.InDelta(t, 1.0, r.get("pid.0.error"), 1e-12)
	assert.InDelta(t, 0.001, r.get("pid.0.errorI"), 1e-12)
	assert.InDelta(t, 1000, r.get("pid.0.errorD"), 1e-9)
	assert.InDelta(t, 1000, r.get("pid.0.commandD"), 1e-9)
	assert.InDelta(t, 2+10*0.001+0.001*1000+0.5*1000, r.get("pid.0.output"), 1e-9)

	r.setp("pid.0.maxoutput", "1.5")
	r.cycles("servo", 1)
	// e = 1 again: errorD = 0, commandD = 0, errorI = 0.002
	assert.InDelta(t, 1.5, r.get("pid.0.output"), 1e-12)
	assert.Equal(t, 1.0, r.get("pid.0.saturated"))
	r.cycles("servo", 1)
	assert.InDelta(t, 0.002, r.get("pid.0.errorI"), 1e-12, "no wind-up while the output is in its limit")

	r.setp("pid.0.deadband", "2")
	r.cycles("servo", 1)
	assert.InDelta(t, 0.002, r.get("pid.0.errorI"), 1e-12, "an error inside the deadband is 0")
	r.setp("pid.0.enable", false)
	r.cycles("servo", 1)
	assert.Zero(t, r.get("pid.0.output"))
	assert.Zero(t, r.get("pid.0.errorI"), "disabled resets the integrator")
}

// A unit step in command, differentiated three times on a 1 ms thread:
// commandD is 1000, then 0; commandDD 1e6, -1e6, then 0; commandDDD 1e9,
// -2e9, 1e9, then 0. With FF3 = 1e-9 and Pgain = 0 the output is
// commandDDD * FF3.
func TestPIDThirdDerivative(t *testing.T) {
	r := load(t, servo+`loadrt pid count=1
addf pid.0.do-pid-calcs servo
setp pid.0.Pgain 0
setp pid.0.FF3 1e-9
setp pid.0.command 1
setp pid.0.feedback 1
setp pid.0.enable 1
`)
	want := []struct{ d, dd, ddd float64 }{{1e3, 1e6, 1e9}, {0, -1e6, -2e9}, {0, 0, 1e9}, {0, 0, 0}}
	for i, w := range want {
		r.cycles("servo", 1)
		assert.InDelta(t, w.d, r.get("pid.0.commandD"), 1e-6, "cycle %d", i)
		assert.InDelta(t, w.dd, r.get("pid.0.commandDD"), 1e-3, "cycle %d", i)
		assert.InDelta(t, w.ddd, r.get("pid.0.commandDDD"), 1, "cycle %d", i)
		assert.InDelta(t, w.ddd*1e-9, r.get("pid.0.output"), 1e-9, "cycle %d", i)
	}
}

// The same step with maxcmdD = 500, maxcmdDD = 1e5 and maxcmdDDD = 1e7:
// each derivative is taken of the limited one before it, then limited.
func TestPIDCommandLimits(t *testing.T) {
	r := load(t, servo+`loadrt pid count=1
addf pid.0.do-pid-calcs servo
setp pid.0.Pgain 0
setp pid.0.FF1 1
setp pid.0.FF2 1
setp pid.0.FF3 1
setp pid.0.maxcmdD 500
setp pid.0.maxcmdDD 1e5
setp pid.0.maxcmdDDD 1e7
setp pid.0.command 1
setp pid.0.feedback 1
setp pid.0.enable 1
`)
	r.cycles("servo", 1)
	// raw: 1000, (500-0)/0.001 = 5e5, (1e5-0)/0.001 = 1e8
	assert.Equal(t, 500.0, r.get("pid.0.commandD"))
	assert.Equal(t, 1e5, r.get("pid.0.commandDD"))
	assert.Equal(t, 1e7, r.get("pid.0.commandDDD"))
	assert.InDelta(t, 500+1e5+1e7, r.get("pid.0.output"), 1e-6)
	r.cycles("servo", 1)
	// raw: 0, (0-500)/0.001 = -5e5, (-1e5-1e5)/0.001 = -2e8
	assert.Equal(t, 0.0, r.get("pid.0.commandD"))
	assert.Equal(t, -1e5, r.get("pid.0.commandDD"))
	assert.Equal(t, -1e7, r.get("pid.0.commandDDD"))
}

// saturated-s and saturated-count count the time and the cycles the
// output spends in its limit, and reset when it leaves it.
func TestPIDSaturatedCounters(t *testing.T) {
	r := load(t, servo+`loadrt pid count=1
addf pid.0.do-pid-calcs servo
setp pid.0.error-previous-target FALSE
setp pid.0.Pgain 2
setp pid.0.maxoutput 1.5
setp pid.0.command 1
setp pid.0.enable 1
`)
	for i := 1; i <= 3; i++ {
		r.cycles("servo", 1)
		assert.Equal(t, 1.5, r.get("pid.0.output"))
		assert.Equal(t, 1.0, r.get("pid.0.saturated"))
		assert.InDelta(t, 0.001*float64(i), r.get("pid.0.saturated-s"), 1e-12)
		assert.Equal(t, float64(i), r.get("pid.0.saturated-count"))
	}
	r.setp("pid.0.maxoutput", "3")
	r.cycles("servo", 1)
	assert.Equal(t, 2.0, r.get("pid.0.output"))
	assert.Zero(t, r.get("pid.0.saturated"))
	assert.Zero(t, r.get("pid.0.saturated-s"))
	assert.Zero(t, r.get("pid.0.saturated-count"))
}

// index-enable falling is the encoder resetting its count on the index
// pulse, and motion resetting the command with it: in that cycle pid
// keeps the derivatives of the cycle before instead of seeing a jump of
// -5 units in one millisecond, and differentiates from the new position
// afterwards.
func TestPIDIndexEnable(t *testing.T) {
	r := load(t, servo+`loadrt pid count=1
addf pid.0.do-pid-calcs servo
setp pid.0.Pgain 0
setp pid.0.Dgain 1
setp pid.0.FF1 1
setp pid.0.enable 1
setp pid.0.index-enable 1
`)
	step := func(cmd, fb string) {
		r.setp("pid.0.command", cmd)
		r.setp("pid.0.feedback", fb)
		r.cycles("servo", 1)
	}
	step("5", "5")
	step("5.001", "5") // commandD = 1, errorD = 1
	assert.InDelta(t, 1, r.get("pid.0.commandD"), 1e-9)
	assert.InDelta(t, 1, r.get("pid.0.errorD"), 1e-9)
	r.setp("pid.0.index-enable", false)
	// The reset: error = -0.001; held, not commandD = (0.002-5.001)/0.001
	// and errorD = (-0.001-0.001)/0.001.
	step("0.002", "0.003")
	assert.InDelta(t, 1, r.get("pid.0.commandD"), 1e-9, "commandD held across the reset")
	assert.InDelta(t, 1, r.get("pid.0.errorD"), 1e-9, "errorD held across the reset")
	assert.InDelta(t, 2, r.get("pid.0.output"), 1e-9)
	step("0.003", "0.002") // from the new position: commandD = 1, errorD = (0.001+0.001)/0.001
	assert.InDelta(t, 1, r.get("pid.0.commandD"), 1e-9)
	assert.InDelta(t, 2, r.get("pid.0.errorD"), 1e-9)

	// Without index-enable the same reset is a derivative spike.
	r.setp("pid.0.index-enable", false)
	step("5.004", "5.003")
	assert.InDelta(t, (5.004-0.003)/0.001, r.get("pid.0.commandD"), 1e-6)
}

func TestSimMotor(t *testing.T) {
	r := load(t, servo+"loadrt sim_motor\naddf sim_motor.0.update servo\nsetp sim_motor.0.time-constant 0\nsetp sim_motor.0.command 250\n")
	r.cycles("servo", 1)
	assert.Zero(t, r.get("sim_motor.0.position"), "not enabled")
	r.setp("sim_motor.0.enable", true)
	r.cycles("servo", 2)
	assert.Equal(t, 0.5, r.get("sim_motor.0.position"), "250 units/s for 2 ms")
	assert.Equal(t, 500.0, r.get("sim_motor.0.counts"))
	assert.Equal(t, 0.5, r.get("sim_motor.0.position-fb"))
	r.setp("sim_motor.0.counts-per-unit", "3")
	r.setp("sim_motor.0.command", "0")
	r.cycles("servo", 1)
	assert.Equal(t, 1.0, r.get("sim_motor.0.counts"), "floor(0.5*3)")
	assert.Equal(t, 1.0/3, r.get("sim_motor.0.position-fb"))
	r.setp("sim_motor.0.time-constant", "0.01")
	r.setp("sim_motor.0.command", "250")
	r.cycles("servo", 1)
	assert.InDelta(t, 250*(1-math.Exp(-0.1)), r.get("sim_motor.0.velocity"), 1e-9, "first-order lag")
}
