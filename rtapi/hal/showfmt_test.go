package hal_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hal"
)

func showOf(t *testing.T, what string, s hal.Snapshot) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, hal.WriteShow(&b, what, "", s))
	return b.String()
}

// show pin, param, sig and comp print what LinuxCNC's halcmd prints
// (halcmd_commands.cc: print_*_info, querydata_refstr_20), byte for
// byte: the component id as Owner, a 20-wide value, u32 and u64 in hex,
// floats as %.7g, and a blank line after each list. The pin and signal
// lines are hal-show's expected ones. Before, Owner was the component's
// name, the value 12 wide, u32/u64 decimal, and no blank line ended a
// list.
func TestWriteShowIsHalcmds(t *testing.T) {
	t.Parallel()
	f := func(v float64) uint64 { return math.Float64bits(v) }
	s := hal.Snapshot{
		Comps: []hal.CompInfo{
			{Name: "conv-bit-u32", Ready: true, ID: 10},
			{Name: "panel", PID: 4242, User: true, ID: 12},
		},
		Pins: []hal.PinInfo{
			{OwnerID: 22, Name: "conv-s64-u64.0.in", Type: hal.TypeS64, Dir: hal.In, Value: 1 << 63, Signal: "net-conv-s64-u64.0.in"},
			{OwnerID: 10, Name: "conv-bit-u32.0.in", Type: hal.TypeBit, Dir: hal.In, Value: 1, Signal: "net-conv-bit-u32.0.in"},
			{OwnerID: 16, Name: "conv-float-s32.0.in", Type: hal.TypeFloat, Dir: hal.In, Value: f(2147483647)},
			{OwnerID: 13, Name: "conv-u32-bit.0.in", Type: hal.TypeU32, Dir: hal.In, Value: 0xffffffff},
			{OwnerID: 25, Name: "conv-u64-s64.0.in", Type: hal.TypeU64, Dir: hal.In, Value: math.MaxUint64},
			{OwnerID: 19, Name: "conv-s32-float.0.out", Type: hal.TypeFloat, Dir: hal.Out, Value: f(-2147483648), Signal: "x"},
			{OwnerID: 7, Name: "p.io", Type: hal.TypeS32, Dir: hal.IO, Value: uint64(0xffffffff), Signal: "y"},
		},
		Params: []hal.ParamInfo{
			{OwnerID: 7, Name: "p.rw", Type: hal.TypeFloat, Dir: hal.RW, Value: f(math.Inf(-1))},
			{OwnerID: 123456, Name: "p.ro", Type: hal.TypeU32, Dir: hal.RO, Value: 1},
			{OwnerID: 7, Name: "p.nan", Type: hal.TypeFloat, Dir: hal.RO, Value: f(math.NaN())},
		},
		Signals: []hal.SignalInfo{
			{Name: "net-conv-u64-s64.0.out", Type: hal.TypeS64, Value: math.MaxUint64, Pins: []string{"conv-u64-s64.0.out"}, Dirs: []hal.Dir{hal.Out}},
			{Name: "net-conv-s64-u64.0.out", Type: hal.TypeU64, Value: 1 << 63, Pins: []string{"conv-s64-u64.0.out", "b.io", "a.in"}, Dirs: []hal.Dir{hal.Out, hal.IO, hal.In}},
			{Name: "lone", Type: hal.TypeBit},
		},
	}
	assert.Equal(t, "Component Pins:\n"+
		"Owner   Type  Dir                 Value  Name\n"+
		"    10  bit   IN                   TRUE  conv-bit-u32.0.in <== net-conv-bit-u32.0.in\n"+
		"    16  float IN           2.147484e+09  conv-float-s32.0.in\n"+
		"    19  float OUT         -2.147484e+09  conv-s32-float.0.out ==> x\n"+
		"    22  s64   IN   -9223372036854775808  conv-s64-u64.0.in <== net-conv-s64-u64.0.in\n"+
		"    13  u32   IN             0xFFFFFFFF  conv-u32-bit.0.in\n"+
		"    25  u64   IN     0xFFFFFFFFFFFFFFFF  conv-u64-s64.0.in\n"+
		"     7  s32   I/O                    -1  p.io <=> y\n"+
		"\n", showOf(t, "pin", s))
	assert.Equal(t, "Parameters:\n"+
		"Owner   Type  Dir                 Value  Name\n"+
		"     7  float RO                    nan  p.nan\n"+
		" 123456  u32   RO             0x00000001  p.ro\n"+
		"     7  float RW                   -inf  p.rw\n"+
		"\n", showOf(t, "param", s))
	assert.Equal(t, "Signals:\n"+
		"Type                  Value  Name     (linked to)\n"+
		"bit                   FALSE  lone\n"+
		"u64      0x8000000000000000  net-conv-s64-u64.0.out\n"+
		"                                 ==> a.in\n"+
		"                                 <=> b.io\n"+
		"                                 <== conv-s64-u64.0.out\n"+
		"s64                      -1  net-conv-u64-s64.0.out\n"+
		"                                 <== conv-u64-s64.0.out\n"+
		"\n", showOf(t, "sig", s))
	assert.Equal(t, "Loaded HAL Components:\n"+
		"ID      Type  Name                                                    PID   State\n"+
		"    12  User  panel                                                    4242 initializing\n"+
		"    10  RT    conv-bit-u32                                                  ready\n"+
		"\n", showOf(t, "comp", s))
}

// WriteShow's pattern matches as halcmd's match does: a name it
// prefixes, or one it matches as a glob, so a pattern holding glob
// characters still selects by prefix. Before, such a pattern was a glob
// only: "in[" (a bad glob) and "a?" selected nothing here.
func TestWriteShowPatternIsHalcmdsMatch(t *testing.T) {
	t.Parallel()
	s := hal.Snapshot{Pins: []hal.PinInfo{
		{OwnerID: 3, Name: "in[0]", Type: hal.TypeBit, Dir: hal.In},
		{OwnerID: 3, Name: "a?bc", Type: hal.TypeBit, Dir: hal.In},
		{OwnerID: 3, Name: "other", Type: hal.TypeBit, Dir: hal.In},
	}}
	for pattern, want := range map[string]string{"in[": "in[0]", "a?": "a?bc", "o*": "other"} {
		var b strings.Builder
		require.NoError(t, hal.WriteShow(&b, "pin", pattern, s))
		assert.Equal(t, "Component Pins:\nOwner   Type  Dir                 Value  Name\n"+
			"     3  bit   IN                  FALSE  "+want+"\n\n", b.String(), pattern)
	}
}

// Components get ids as in a LinuxCNC uspace session, where every
// rtapi_init takes the next number: 1 to 3 are spent before the first
// command, a component made directly takes the next, a user component
// (loadusr) spends one for its process's hal_lib_init first. Show's
// Owner is that id. (loadrt's are tested in comps' TestShowShapes and
// halrun's hal-show.)
func TestComponentIDsAsLinuxCNC(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h := newHAL(t, hal.Options{})
	a, err := h.NewComponent("a")
	require.NoError(t, err)
	a.Float("a.in", hal.In)
	require.NoError(t, a.Ready())
	u, err := h.NewUserComponent("u", 4242)
	require.NoError(t, err)
	b, err := h.NewComponent("b")
	require.NoError(t, err)
	require.NoError(t, b.Ready())
	var out strings.Builder
	require.NoError(t, h.Show(&out, "pin", ""))
	assert.Equal(t, "Component Pins:\nOwner   Type  Dir                 Value  Name\n"+
		"     4  float IN                      0  a.in\n\n", out.String())
	s, err := h.View().Read()
	require.NoError(t, err)
	ids := map[string]int{}
	for _, c := range s.Comps {
		ids[c.Name] = c.ID
	}
	assert.Equal(t, map[string]int{"a": 4, "u": 6, "b": 7}, ids, "the View reads the same ids from the data segment")
	_ = u
}
