package comps_test

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// convNoClamp are the converters whose values always fit: mkconv.sh
// comments out their out-of-range pin and clamp parameter.
var convNoClamp = map[string]bool{
	"conv_bit_float": true, "conv_bit_s32": true, "conv_bit_s64": true, "conv_bit_u32": true, "conv_bit_u64": true,
	"conv_s32_float": true, "conv_s64_float": true, "conv_u32_float": true, "conv_u64_float": true,
	"conv_s32_s64": true, "conv_u32_s64": true, "conv_u32_u64": true,
}

// convNames are the converters LinuxCNC builds (its Submakefile's
// CONVERTERS): no conv_float_bit.
var convNames = []string{
	"conv_bit_float", "conv_bit_s32", "conv_bit_s64", "conv_bit_u32", "conv_bit_u64",
	"conv_float_s32", "conv_float_s64", "conv_float_u32", "conv_float_u64",
	"conv_s32_bit", "conv_s32_float", "conv_s32_s64", "conv_s32_u32", "conv_s32_u64",
	"conv_s64_bit", "conv_s64_float", "conv_s64_s32", "conv_s64_u32", "conv_s64_u64",
	"conv_u32_bit", "conv_u32_float", "conv_u32_s32", "conv_u32_s64", "conv_u32_u64",
	"conv_u64_bit", "conv_u64_float", "conv_u64_s32", "conv_u64_s64", "conv_u64_u32",
}

// Every converter has LinuxCNC's pins, parameter, default and function:
// in and out of its types, and out-of-range with clamp (FALSE) where
// mkconv.sh keeps them.
func TestConvPinsAndFunctions(t *testing.T) {
	src := servo
	for _, n := range convNames {
		src += "loadrt " + n + "\n"
	}
	r := load(t, src)
	typ := map[string]string{"bit": "bit", "float": "float", "s32": "s32", "s64": "s64", "u32": "u32", "u64": "u64"}
	var want []string
	for _, n := range convNames {
		inst := strings.ReplaceAll(n, "_", "-") + ".0" // halcompile's to_hal
		f := strings.Split(n, "_")
		pins := []string{"in " + typ[f[1]] + " IN", "out " + typ[f[2]] + " OUT"}
		var params []string
		if !convNoClamp[n] {
			pins = append(pins, "out-of-range bit OUT")
			params = []string{"clamp bit RW"}
			v, err := r.h.GetP(inst + ".clamp")
			require.NoError(t, err)
			assert.Equal(t, "FALSE", v, n)
		}
		assert.Equal(t, pins, r.pinNames(inst), n)
		assert.Equal(t, params, r.paramNames(inst), n)
		want = append(want, inst)
	}
	var functs []string
	for _, f := range r.h.Functs() {
		functs = append(functs, f.Name())
	}
	assert.Equal(t, want, functs)
	r = load(t, servo+"loadrt conv_s32_float names=a,b\nloadrt conv_u64_s32 count=2\n")
	assert.Equal(t, []string{"in s32 IN", "out float OUT"}, r.pinNames("b"))
	assert.Equal(t, []string{"in u64 IN", "out s32 OUT", "out-of-range bit OUT"}, r.pinNames("conv-u64-s32.1"))
	functs = nil
	for _, f := range r.h.Functs() {
		functs = append(functs, f.Name())
	}
	assert.Equal(t, []string{"a", "b", "conv-u64-s32.0", "conv-u64-s32.1"}, functs)
	assert.NotContains(t, hal.Registered(), "conv_float_bit")
}

// TestConvLinuxCNCGolden feeds every converter, unclamped (instance 0)
// and clamped (instance 1), the inputs of testdata/linuxcnc/conv.golden
// in order and compares out and out-of-range after each with what
// LinuxCNC's own conv code printed (conv-gen.sh), bit for bit: wrap
// around, the clamps at (double)MAX, out-of-range that stays set while
// unclamped, and x86-64's float conversions of NaN, ±Inf and values out
// of range.
func TestConvLinuxCNCGolden(t *testing.T) {
	f, err := os.Open("testdata/linuxcnc/conv.golden")
	require.NoError(t, err)
	defer f.Close()
	src := servo
	for _, n := range convNames {
		d := strings.ReplaceAll(n, "_", "-")
		src += "loadrt " + n + " count=2\naddf " + d + ".0 servo\naddf " + d + ".1 servo\n"
		if !convNoClamp[n] {
			src += "setp " + d + ".1.clamp 1\n"
		}
	}
	r := load(t, src)
	lines, seen := 0, map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines++
		g := strings.Fields(sc.Text())
		require.Len(t, g, 5, "conv.golden line %d", lines)
		name, inst := g[0], strings.ReplaceAll(g[0], "_", "-")+"."+g[1]
		seen[name] = true
		r.setp(inst+".in", g[2])
		r.cycles("servo", 1)
		typ, w := r.word(inst + ".out")
		if typ == hal.TypeFloat {
			want, err := strconv.ParseFloat(g[3], 64)
			require.NoError(t, err)
			got := math.Float64frombits(w)
			if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
				t.Errorf("conv.golden line %d: %s(%s).out = %x, LinuxCNC %s", lines, inst, g[2], got, g[3])
			}
		} else if got := hal.FormatValue(typ, w); got != goldenInt(typ, g[3]) {
			t.Errorf("conv.golden line %d: %s(%s).out = %s, LinuxCNC %s", lines, inst, g[2], got, g[3])
		}
		oor := "0"
		if !convNoClamp[name] {
			if _, w := r.word(inst + ".out-of-range"); w != 0 {
				oor = "1"
			}
		}
		if oor != g[4] {
			t.Errorf("conv.golden line %d: %s(%s).out-of-range = %s, LinuxCNC %s", lines, inst, g[2], oor, g[4])
		}
	}
	require.NoError(t, sc.Err())
	assert.Len(t, seen, len(convNames), "converters in conv.golden")
}

// goldenInt is a bit or integer as FormatValue prints it.
func goldenInt(t hal.Type, s string) string {
	if t == hal.TypeBit {
		return map[string]string{"0": "FALSE", "1": "TRUE"}[s]
	}
	return s
}

// word returns the type and raw word of pin name.
func (r *rig) word(name string) (hal.Type, uint64) {
	r.t.Helper()
	s, err := r.h.View().Read()
	require.NoError(r.t, err)
	for _, p := range s.Pins {
		if p.Name == name {
			return p.Type, p.Value
		}
	}
	r.t.Fatalf("no pin %q", name)
	return 0, 0
}
