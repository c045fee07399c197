package comps_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The values written as hex floats below are what LinuxCNC's C
// expressions give compiled by gcc -O2 on x86-64.

func TestMathPinsAndFunctions(t *testing.T) {
	r := load(t, servo+`
loadrt hypot
loadrt wcomp
loadrt comp
loadrt abs
loadrt near
loadrt limit2
loadrt mult2
loadrt mux4
loadrt select8
loadrt match8
loadrt tristate_float names=tri
`)
	pins := map[string][]string{
		"hypot.0": {"in0 float IN", "in1 float IN", "in2 float IN", "out float OUT"},
		"wcomp.0": {"in float IN", "max float IN", "min float IN", "out bit OUT", "over bit OUT", "under bit OUT"},
		"comp.0":  {"equal bit OUT", "in0 float IN", "in1 float IN", "out bit OUT"},
		"abs.0":   {"in float IN", "is-negative bit OUT", "is-positive bit OUT", "out float OUT", "sign bit OUT"},
		"near.0":  {"in1 float IN", "in2 float IN", "out bit OUT"},
		"limit2.0": {"in float IN", "load bit IN", "max float IN", "maxv float IN", "min float IN",
			"out float OUT"},
		"mult2.0": {"in0 float IN", "in1 float IN", "out float OUT"},
		"mux4.0": {"in0 float IN", "in1 float IN", "in2 float IN", "in3 float IN", "out float OUT",
			"sel0 bit IN", "sel1 bit IN"},
		"select8.0": {"enable bit IN", "out0 bit OUT", "out1 bit OUT", "out2 bit OUT", "out3 bit OUT",
			"out4 bit OUT", "out5 bit OUT", "out6 bit OUT", "out7 bit OUT", "sel s32 IN"},
		"match8.0": {"a0 bit IN", "a1 bit IN", "a2 bit IN", "a3 bit IN", "a4 bit IN", "a5 bit IN", "a6 bit IN",
			"a7 bit IN", "b0 bit IN", "b1 bit IN", "b2 bit IN", "b3 bit IN", "b4 bit IN", "b5 bit IN",
			"b6 bit IN", "b7 bit IN", "in bit IN", "out bit OUT"},
		"tri": {"enable bit IN", "in float IN", "out float I/O"},
	}
	params := map[string][]string{
		"comp.0": {"hyst float RW"},
		"near.0": {"difference float RW", "scale float RW"},
	}
	for p, want := range pins {
		assert.Equal(t, want, r.pinNames(p), p)
		assert.Equal(t, params[p], r.paramNames(p), p)
	}
	for name, want := range map[string]string{
		"comp.0.hyst": "0", "near.0.scale": "1", "near.0.difference": "0",
		"limit2.0.min": "-1e+20", "limit2.0.max": "1e+20", "limit2.0.maxv": "1e+20",
		"select8.0.enable": "TRUE", "match8.0.in": "TRUE", "wcomp.0.min": "0", "wcomp.0.max": "0",
	} {
		v, err := r.h.GetP(name)
		require.NoError(t, err, name)
		assert.Equal(t, want, v, name)
	}
	var functs []string
	for _, f := range r.h.Functs() {
		functs = append(functs, f.Name())
	}
	assert.Equal(t, []string{"hypot.0", "wcomp.0", "comp.0", "abs.0", "near.0", "limit2.0", "mult2.0", "mux4.0",
		"select8.0", "match8.0", "tri"}, functs)
}

// rig1 loads one component instance NAME.0 with its function in servo.
func rig1(t *testing.T, name string) *rig {
	return load(t, servo+"loadrt "+name+"\naddf "+name+".0 servo\n")
}

// step writes pins and parameters of NAME.0, then runs one cycle.
func (r *rig) step(name string, kv ...any) {
	r.t.Helper()
	for i := 0; i < len(kv); i += 2 {
		r.setp(name+".0."+kv[i].(string), kv[i+1])
	}
	r.cycles("servo", 1)
}

func (r *rig) bits(names ...string) []bool {
	r.t.Helper()
	out := make([]bool, len(names))
	for i, n := range names {
		out[i] = r.get(n) != 0
	}
	return out
}

func hex(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return f
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func TestHypotMult2(t *testing.T) {
	r := load(t, servo+"loadrt hypot\nloadrt mult2\naddf hypot.0 servo\naddf mult2.0 servo\n")
	r.step("hypot", "in0", 3.0, "in1", 4.0, "in2", 12.0)
	assert.Equal(t, 13.0, r.get("hypot.0.out"))
	r.step("hypot", "in0", 0.1, "in1", 0.2, "in2", 0.3)
	assert.Equal(t, hex("0x1.7f254dab9cc3bp-2"), r.get("hypot.0.out"), "each product and sum rounded")
	r.step("mult2", "in0", 0.1, "in1", 0.3)
	assert.Equal(t, hex("0x1.eb851eb851eb8p-6"), r.get("mult2.0.out"))
}

// wcomp: under is in <= min, over is in >= max, out neither; a NaN is
// neither.
func TestWcomp(t *testing.T) {
	r := rig1(t, "wcomp")
	r.setp("wcomp.0.min", 1.0)
	r.setp("wcomp.0.max", 2.0)
	o := []string{"wcomp.0.under", "wcomp.0.out", "wcomp.0.over"}
	for in, want := range map[float64][]bool{
		0.5: {true, false, false}, 1: {true, false, false}, 1.5: {false, true, false},
		2: {false, false, true}, 3: {false, false, true}, math.NaN(): {false, true, false},
	} {
		r.step("wcomp", "in", in)
		assert.Equal(t, want, r.bits(o...), "in %v", in)
	}
}

// comp keeps out inside the hysteresis band |in1 - in0| <= hyst/2, and
// sets equal there.
func TestCompHysteresis(t *testing.T) {
	r := rig1(t, "comp")
	o := []string{"comp.0.out", "comp.0.equal"}
	r.step("comp", "hyst", 0.2)
	assert.Equal(t, []bool{false, true}, r.bits(o...), "0 - 0 is in the band")
	for _, c := range []struct {
		in1        float64
		out, equal bool
	}{
		{0.05, false, true}, {0.1, false, true}, {0.11, true, false}, {0.05, true, true},
		{-0.1, true, true}, {-0.11, false, false}, {-0.05, false, true}, {math.NaN(), false, true},
		{1, true, false}, {math.NaN(), true, true},
	} {
		r.step("comp", "in1", c.in1)
		assert.Equal(t, []bool{c.out, c.equal}, r.bits(o...), "in1 %v", c.in1)
	}
	r.step("comp", "hyst", 0.0, "in1", 0.0)
	assert.Equal(t, []bool{true, true}, r.bits(o...), "hyst 0: equal inputs keep out")
	r.step("comp", "in1", -1e-300)
	assert.Equal(t, []bool{false, false}, r.bits(o...))
}

func TestAbs(t *testing.T) {
	r := rig1(t, "abs")
	o := []string{"abs.0.sign", "abs.0.is-positive", "abs.0.is-negative"}
	for _, c := range []struct {
		in, out float64
		flags   []bool
	}{
		{-2.5, 2.5, []bool{true, false, true}}, {2.5, 2.5, []bool{false, true, false}},
		{0.000001, 0.000001, []bool{false, false, false}}, {0.0000011, 0.0000011, []bool{false, true, false}},
		{-0.000001, 0.000001, []bool{true, false, false}}, {-0.0000011, 0.0000011, []bool{true, false, true}},
	} {
		r.step("abs", "in", c.in)
		assert.Equal(t, c.out, r.get("abs.0.out"), "in %v", c.in)
		assert.Equal(t, c.flags, r.bits(o...), "in %v", c.in)
	}
	r.step("abs", "in", "-0")
	assert.Equal(t, math.Copysign(0, -1), r.get("abs.0.out"), "-0 >= 0: out = in")
	assert.True(t, math.Signbit(r.get("abs.0.out")))
	assert.Equal(t, []bool{false, false, false}, r.bits(o...))
	r.step("abs", "in", "NaN")
	assert.True(t, math.IsNaN(r.get("abs.0.out")))
	assert.True(t, math.Signbit(r.get("abs.0.out")), "out = -in flips the NaN's sign")
	assert.Equal(t, []bool{true, false, false}, r.bits(o...))
}

func TestNear(t *testing.T) {
	r := rig1(t, "near")
	for _, c := range []struct {
		in1, in2, scale, difference float64
		out                         bool
	}{
		{0, 0, 1, 0, true}, {1, 1, 1, 0, true}, {1, 1.0000001, 1, 0, false},
		{10, 10.5, 1.1, 0, true}, {10, 11, 1.1, 0, true}, {10, 11.1, 1.1, 0, false},
		{10, 9.1, 1.1, 0, true}, {10, 9.09, 1.1, 0, false},
		{-10, -10.5, 1.1, 0, true}, {-10, 10.5, 1.1, 0, false}, {10, -10.5, 1.1, 0, false},
		{10, 10.5, 1, 0.5, true}, {10, 10.5, 1, 0.4999, false}, {-10, -10.5, 1, 0.5, true},
		{10, 10.5, 0.5, 0.1, false}, {math.NaN(), 1, 2, 1e300, false},
	} {
		r.step("near", "in1", c.in1, "in2", c.in2, "scale", c.scale, "difference", c.difference)
		assert.Equal(t, c.out, r.get("near.0.out") != 0, "%+v", c)
	}
}

// limit2 moves at most maxv * period per period from its last out.
func TestLimit2(t *testing.T) {
	r := rig1(t, "limit2")
	r.step("limit2", "maxv", 0.3, "in", 10.0)
	assert.Equal(t, hex("0x1.3a92a30553261p-12"), r.get("limit2.0.out"))
	r.step("limit2")
	assert.Equal(t, hex("0x1.3a92a30553261p-11"), r.get("limit2.0.out"))
	r.step("limit2")
	assert.Equal(t, hex("0x1.d7dbf487fcb92p-11"), r.get("limit2.0.out"))
	r.step("limit2", "load", true, "max", 5.0)
	assert.Equal(t, 5.0, r.get("limit2.0.out"), "load jumps to in, clamped")
	r.step("limit2", "load", false, "in", -100.0, "min", -2.0, "maxv", 1000.0)
	assert.Equal(t, 4.0, r.get("limit2.0.out"))
	r.cycles("servo", 10)
	assert.Equal(t, -2.0, r.get("limit2.0.out"), "min")
	r.step("limit2", "in", "NaN")
	assert.True(t, math.IsNaN(r.get("limit2.0.out")), "NaN passes C's clamp")
	r.step("limit2", "in", 3.0)
	assert.Equal(t, 3.0, r.get("limit2.0.out"), "no comparison with NaN ± maxdelta holds: in passes")
	r.step("limit2", "in", 0.0, "load", true)
	assert.Equal(t, 0.0, r.get("limit2.0.out"))
}

func TestMux4(t *testing.T) {
	r := rig1(t, "mux4")
	r.step("mux4", "in0", 10.0, "in1", 11.0, "in2", 12.0, "in3", 13.0)
	for _, c := range []struct {
		sel1, sel0 bool
		out        float64
	}{{false, false, 10}, {false, true, 11}, {true, false, 12}, {true, true, 13}} {
		r.step("mux4", "sel1", c.sel1, "sel0", c.sel0)
		assert.Equal(t, c.out, r.get("mux4.0.out"), "%+v", c)
	}
}

func TestSelect8(t *testing.T) {
	r := rig1(t, "select8")
	outs := []string{"select8.0.out0", "select8.0.out1", "select8.0.out2", "select8.0.out3",
		"select8.0.out4", "select8.0.out5", "select8.0.out6", "select8.0.out7"}
	for sel := int64(-1); sel <= 8; sel++ {
		r.step("select8", "sel", itoa(sel))
		want := make([]bool, 8)
		if sel >= 0 && sel < 8 {
			want[sel] = true
		}
		assert.Equal(t, want, r.bits(outs...), "sel %d", sel)
	}
	r.step("select8", "sel", "3", "enable", false)
	assert.Equal(t, make([]bool, 8), r.bits(outs...), "disabled")
}

func TestMatch8(t *testing.T) {
	r := rig1(t, "match8")
	r.step("match8")
	assert.Equal(t, 1.0, r.get("match8.0.out"), "all FALSE match")
	for i := range 8 {
		a := "a" + itoa(int64(i))
		b := "b" + itoa(int64(i))
		r.step("match8", a, true)
		assert.Zero(t, r.get("match8.0.out"), a)
		r.step("match8", b, true)
		assert.Equal(t, 1.0, r.get("match8.0.out"), b)
	}
	r.step("match8", "in", false)
	assert.Zero(t, r.get("match8.0.out"), "in FALSE")
}

func TestTristateFloat(t *testing.T) {
	r := load(t, servo+"loadrt tristate_float\naddf tristate-float.0 servo\n")
	r.step("tristate-float", "out", 5.0, "in", 3.0)
	assert.Equal(t, 5.0, r.get("tristate-float.0.out"), "disabled: out left alone")
	r.step("tristate-float", "enable", true)
	assert.Equal(t, 3.0, r.get("tristate-float.0.out"))
	r.step("tristate-float", "enable", false, "in", 4.0)
	assert.Equal(t, 3.0, r.get("tristate-float.0.out"))
}
