package comps

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// bench is a sim-flavor HAL with one component whose functions a test
// calls directly, cycle by cycle.
type bench struct {
	t *testing.T
	h *hal.HAL
	c *hal.Component
}

func newBench(t *testing.T, comp string) *bench {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	c, err := h.NewComponent(comp)
	require.NoError(t, err)
	return &bench{t, h, c}
}

func (b *bench) ready() { b.t.Helper(); require.NoError(b.t, b.c.Ready()) }

// set does setp name v; v is a bool or a number.
func (b *bench) set(name string, v any) {
	b.t.Helper()
	s := ""
	switch v := v.(type) {
	case bool:
		s = "0"
		if v {
			s = "1"
		}
	case int:
		s = strconv.Itoa(v)
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	}
	require.NoError(b.t, b.h.SetP(name, s))
}

// word returns the value word of a pin or parameter.
func (b *bench) word(name string) uint64 {
	b.t.Helper()
	s, err := b.h.View().Read()
	require.NoError(b.t, err)
	for _, p := range s.Pins {
		if p.Name == name {
			return p.Value
		}
	}
	for _, p := range s.Params {
		if p.Name == name {
			return p.Value
		}
	}
	b.t.Fatalf("no pin or parameter %q", name)
	return 0
}

func (b *bench) bit(name string) bool      { b.t.Helper(); return b.word(name) != 0 }
func (b *bench) float(name string) float64 { b.t.Helper(); return math.Float64frombits(b.word(name)) }
func (b *bench) s32(name string) int32     { b.t.Helper(); return int32(uint32(b.word(name))) }
func (b *bench) u32(name string) uint32    { b.t.Helper(); return uint32(b.word(name)) }

// bits reads several bit pins at once.
func (b *bench) bits(names ...string) []bool {
	b.t.Helper()
	out := make([]bool, len(names))
	for i, n := range names {
		out[i] = b.bit(n)
	}
	return out
}

const ms = time.Millisecond

// estop_latch, cycle by cycle: starts faulted, a rising edge of reset
// with good inputs makes it OK, watchdog toggles each OK cycle, any
// fault trips it, and a reset held through a fault is no edge.
func TestEstopLatchCycles(t *testing.T) {
	t.Parallel()
	b := newBench(t, "estop_latch")
	fn := newEstopLatch(b.c, "e")
	b.ready()
	require.Equal(t, []bool{true, false, false, true, false}, b.bits("e.ok-in", "e.fault-in", "e.ok-out", "e.fault-out", "e.watchdog"))
	steps := []struct {
		okIn, faultIn, reset    bool
		okOut, faultOut, wdWant bool
	}{
		{true, false, false, false, true, false},
		{true, false, true, true, false, true}, // rising edge: OK, and the watchdog toggles at once
		{true, false, true, true, false, false},
		{true, false, false, true, false, true},
		{true, true, false, false, true, true}, // fault-in trips; watchdog frozen
		{true, false, false, false, true, true},
		{false, false, true, false, true, true}, // reset rises while ok-in is FALSE
		{true, false, true, false, true, true},  // held: no edge
		{true, false, false, false, true, true},
		{true, false, true, true, false, false},
	}
	for i, s := range steps {
		b.set("e.ok-in", s.okIn)
		b.set("e.fault-in", s.faultIn)
		b.set("e.reset", s.reset)
		fn(ms, 0)
		require.Equal(t, []bool{s.okOut, s.faultOut, s.wdWant}, b.bits("e.ok-out", "e.fault-out", "e.watchdog"), "cycle %d", i+1)
	}
}

// charge_pump: out, out-2 and out-4 are bits 0, 1, 2 of the count of
// enabled cycles; disabled they are FALSE and the count holds.
func TestChargePumpCycles(t *testing.T) {
	t.Parallel()
	b := newBench(t, "charge_pump")
	fn := newChargePump(b.c, "charge-pump")
	b.ready()
	outs := []string{"charge-pump.out", "charge-pump.out-2", "charge-pump.out-4"}
	for acc := 1; acc <= 9; acc++ {
		fn(ms, 0)
		require.Equal(t, []bool{acc&1 != 0, acc&2 != 0, acc&4 != 0}, b.bits(outs...), "cycle %d", acc)
	}
	b.set("charge-pump.enable", false)
	fn(ms, 0)
	require.Equal(t, []bool{false, false, false}, b.bits(outs...))
	b.set("charge-pump.enable", true)
	fn(ms, 0) // acc 10
	require.Equal(t, []bool{false, true, false}, b.bits(outs...))
}

// oneshot: a 3.5 ms pulse at 1 ms periods is TRUE for 4 cycles;
// time-left drops by period * 1e-9 each; retrigger restarts it, a
// non-retriggerable pulse ignores the edge; falling edges count only
// with falling; reset ends the pulse.
func TestOneshotCycles(t *testing.T) {
	t.Parallel()
	b := newBench(t, "oneshot")
	fn := newOneshot(b.c, "o")
	b.ready()
	require.Equal(t, []bool{true, true, false}, b.bits("o.retriggerable", "o.rising", "o.falling"))
	b.set("o.width", 0.0035)
	step := float64(ms) * 0.000000001
	timer := 0.0
	run := func(in, want bool, left float64, what string) {
		t.Helper()
		b.set("o.in", in)
		fn(ms, 0)
		require.Equal(t, []bool{want, !want}, b.bits("o.out", "o.out-not"), what)
		require.Equal(t, left, b.float("o.time-left"), what)
	}
	run(false, false, 0, "idle")
	timer = 0.0035
	run(true, true, timer, "rising edge")
	for i := range 3 {
		timer -= step
		run(true, true, timer, "pulse "+strconv.Itoa(i))
	}
	run(false, false, 0, "falling edge ignored, pulse over after 4 cycles")

	run(true, true, 0.0035, "second pulse")
	timer = 0.0035 - step
	run(false, true, timer, "low")
	run(true, true, 0.0035, "retriggered: restarts at width")
	b.set("o.retriggerable", false)
	timer = 0.0035 - step
	run(false, true, timer, "low")
	timer -= step
	run(true, true, timer, "not retriggerable: edge ignored")
	b.set("o.reset", true)
	fn(ms, 0)
	require.Equal(t, []bool{false, true}, b.bits("o.out", "o.out-not"), "reset")
	b.set("o.reset", false)
	b.set("o.falling", true)
	b.set("o.rising", false)
	run(true, false, 0, "rising edge with rising FALSE (reset cleared old in)")
	run(false, true, 0.0035, "falling edge")
}

// flipflop truth table: reset beats set beats a rising clk edge.
func TestFlipflopCycles(t *testing.T) {
	t.Parallel()
	b := newBench(t, "flipflop")
	fn := newFlipflop(b.c, "f")
	b.ready()
	steps := []struct {
		data, clk, set, reset bool
		out                   bool
		outNot                bool
	}{
		{true, false, false, false, false, false}, // nothing written yet: both FALSE
		{true, true, false, false, true, false},   // rising clk
		{false, true, false, false, true, false},  // clk held high
		{false, false, false, false, true, false},
		{false, true, false, false, false, true}, // rising clk
		{false, false, true, false, true, false}, // set
		{false, false, true, true, false, true},  // reset overrides set
		{true, true, true, false, true, false},   // set wins over a clk edge
		{false, false, false, false, true, false},
	}
	for i, s := range steps {
		b.set("f.data", s.data)
		b.set("f.clk", s.clk)
		b.set("f.set", s.set)
		b.set("f.reset", s.reset)
		fn(ms, 0)
		require.Equal(t, []bool{s.out, s.outNot}, b.bits("f.out", "f.out-not"), "cycle %d", i+1)
	}
}

// edge: falling edges by default; the first call only records in; a
// 2.5 ms width at 1 ms periods holds out for 3 cycles and time-left-ns
// goes 2500000, 1500000, 500000, 0; width 0 gives one cycle.
func TestEdgeCycles(t *testing.T) {
	t.Parallel()
	b := newBench(t, "edge")
	fn := newEdge(b.c, "e")
	b.ready()
	type step struct {
		in, out bool
		left    int32
	}
	run := func(what string, steps ...step) {
		t.Helper()
		for i, s := range steps {
			b.set("e.in", s.in)
			fn(ms, 0)
			require.Equal(t, []bool{s.out, !s.out, s.in}, b.bits("e.out", "e.out-invert", "e.last-in"), "%s cycle %d", what, i+1)
			require.Equal(t, s.left, b.s32("e.time-left-ns"), "%s cycle %d", what, i+1)
		}
	}
	run("first call", step{false, false, 0})
	run("rising ignored", step{true, false, 0})
	run("width 0", step{false, true, 0}, step{false, false, 0})
	b.set("e.out-width-ns", 2500000)
	run("width 2.5ms", step{true, false, 0}, step{false, true, 2500000}, step{false, true, 1500000},
		step{false, true, 500000}, step{false, false, 0}, step{false, false, 0})
	b.set("e.in-edge", false)
	run("rising", step{true, true, 2500000}, step{false, true, 1500000})
	b.set("e.both", true)
	b.set("e.out-width-ns", 0)
	run("both", step{true, true, 0}, step{true, false, 0}, step{false, true, 0}, step{false, false, 0})
}

// The first call of edge shows no edge even when in starts TRUE, and
// out-invert is written from it.
func TestEdgeFirstCall(t *testing.T) {
	t.Parallel()
	b := newBench(t, "edge")
	fn := newEdge(b.c, "e")
	b.ready()
	b.set("e.in-edge", false)
	b.set("e.in", true)
	fn(ms, 0)
	require.Equal(t, []bool{false, true, true}, b.bits("e.out", "e.out-invert", "e.last-in"))
}

// toggle: in TRUE for debounce (2) calls toggles out once; a bounce
// shorter than that does nothing; debounce 0 is set back to 2.
func TestToggleCycles(t *testing.T) {
	t.Parallel()
	b := newBench(t, "toggle")
	fn := newToggle(b.c, "t")
	b.ready()
	require.Equal(t, uint32(2), b.u32("t.debounce"))
	ins := []bool{true, true, true, false, false, true, false, true, true, false, true}
	outs := []bool{false, true, true, true, true, true, true, true, false, false, false}
	for i, in := range ins {
		b.set("t.in", in)
		fn(ms, 0)
		require.Equal(t, outs[i], b.bit("t.out"), "cycle %d", i+1)
	}
	b.set("t.debounce", 0)
	fn(ms, 0)
	require.Equal(t, uint32(2), b.u32("t.debounce"))
	b.set("t.debounce", 10001)
	fn(ms, 0)
	require.Equal(t, uint32(2), b.u32("t.debounce"))
}

// timedelay: with on-delay 2.5 ms and off-delay 1.5 ms at 1 ms periods,
// out rises on the 3rd TRUE call and falls on the 2nd FALSE call;
// elapsed is the sum of period * 1e-9 and keeps its last value.
func TestTimedelayCycles(t *testing.T) {
	t.Parallel()
	b := newBench(t, "timedelay")
	fn := newTimedelay(b.c, "d")
	b.ready()
	require.Equal(t, 0.5, b.float("d.on-delay"))
	require.Equal(t, 0.5, b.float("d.off-delay"))
	b.set("d.on-delay", 0.0025)
	b.set("d.off-delay", 0.0015)
	step := float64(ms) * 1e-9
	ins := []bool{true, true, true, true, false, true, false, false, false}
	outs := []bool{false, false, true, true, true, true, true, false, false}
	two := step + step
	elapsed := []float64{step, two, two + step, two + step, step, step, step, two, two}
	for i, in := range ins {
		b.set("d.in", in)
		fn(ms, 0)
		require.Equal(t, outs[i], b.bit("d.out"), "cycle %d", i+1)
		require.Equal(t, elapsed[i], b.float("d.elapsed"), "cycle %d", i+1)
	}
}

// logic 0x1f03: three inputs, every output, over the whole truth table.
func TestLogicTruthTable(t *testing.T) {
	t.Parallel()
	b := newBench(t, "logic")
	fn := newLogic(b.c, "g", 0x1f03)
	fn0 := newLogic(b.c, "none", 0x1900) // no input: and TRUE, nand and nor as of or FALSE
	b.ready()
	for v := range 8 {
		n := 0
		for i := range 3 {
			b.set("g.in-0"+strconv.Itoa(i), v>>i&1 != 0)
			n += v >> i & 1
		}
		fn(ms, 0)
		want := []bool{n == 3, n > 0, n%2 == 1, n != 3, n == 0}
		require.Equal(t, want, b.bits("g.and", "g.or", "g.xor", "g.nand", "g.nor"), "inputs %03b", v)
	}
	fn0(ms, 0)
	require.Equal(t, []bool{true, false, true}, b.bits("none.and", "none.nand", "none.nor"))
}

// updown: edges count (none on the first call), reset holds 0, clamp
// and wrap keep it in [min, max].
func TestUpdownCycles(t *testing.T) {
	t.Parallel()
	b := newBench(t, "updown")
	fn := newUpdown(b.c, "u")
	b.ready()
	require.Equal(t, int32(0x7FFFFFFF), b.s32("u.max"))
	type step struct {
		up, down, reset bool
		count           int32
	}
	run := func(what string, steps ...step) {
		t.Helper()
		for i, s := range steps {
			b.set("u.countup", s.up)
			b.set("u.countdown", s.down)
			b.set("u.reset", s.reset)
			fn(ms, 0)
			require.Equal(t, s.count, b.s32("u.count"), "%s cycle %d", what, i+1)
		}
	}
	run("count", step{true, false, false, 0}, step{false, false, false, 0}, step{true, false, false, 1},
		step{true, false, false, 1}, step{false, false, false, 1}, step{true, true, false, 1},
		step{false, true, false, 1}, step{false, false, false, 1}, step{false, true, false, 0},
		step{false, false, false, 0}, step{false, true, false, -1})
	run("reset", step{true, false, true, 0}, step{false, false, true, 0})
	b.set("u.clamp", true)
	b.set("u.max", 2)
	b.set("u.min", -1)
	u := func(c int32) step { return step{true, false, false, c} }
	d := func(c int32) step { return step{false, true, false, c} }
	n := func(c int32) step { return step{false, false, false, c} }
	run("clamp", u(1), n(1), u(2), n(2), u(2), n(2), d(1), n(1), d(0), n(0), d(-1), n(-1), d(-1))
	b.set("u.wrap", true)
	run("wrap", n(-1), d(2), n(2), u(-1), n(-1), u(0))
	b.set("u.wrap", false)
	b.set("u.clamp", false)
	b.set("u.max", 0x7FFFFFFF)
	b.set("u.min", 0)
	run("reset to 0", step{false, false, true, 0})
}

// debounce delay 2: out turns TRUE on the 3rd TRUE call and FALSE on the
// 3rd FALSE call after; a negative delay becomes 1.
func TestDebounceCycles(t *testing.T) {
	t.Parallel()
	b := newBench(t, "debounce")
	fn := newDebounceGroup(b.c, 0, 2)
	b.ready()
	require.Equal(t, int32(5), b.s32("debounce.0.delay"))
	b.set("debounce.0.delay", 2)
	ins := []bool{true, true, true, true, false, true, false, false, false, false}
	outs := []bool{false, false, true, true, true, true, true, true, false, false}
	for i, in := range ins {
		b.set("debounce.0.0.in", in)
		fn(ms, 0)
		require.Equal(t, []bool{outs[i], false}, b.bits("debounce.0.0.out", "debounce.0.1.out"), "cycle %d", i+1)
	}
	b.set("debounce.0.delay", -3)
	fn(ms, 0)
	require.Equal(t, int32(1), b.s32("debounce.0.delay"))
}
