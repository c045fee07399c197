package hal_test

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// twoComps makes a component "a" with one pin of each kind and a "b" with
// matching inputs.
type pins struct {
	outF, inF, ioF hal.Float
	outB, inB      hal.Bit
	outS           hal.S32
	inU            hal.U32
	outS64         hal.S64
	inU64          hal.U64
	gain           hal.Float
	ro             hal.S32
}

func twoComps(t *testing.T, h *hal.HAL) *pins {
	t.Helper()
	a, err := h.NewComponent("a")
	require.NoError(t, err)
	b, err := h.NewComponent("b")
	require.NoError(t, err)
	p := &pins{
		outF:   a.Float("a.out", hal.Out),
		outB:   a.Bit("a.bit-out", hal.Out),
		outS:   a.S32("a.s32-out", hal.Out),
		outS64: a.S64("a.s64-out", hal.Out),
		gain:   a.FloatParam("a.gain", hal.RW),
		ro:     a.S32Param("a.count", hal.RO),
		inF:    b.Float("b.in", hal.In),
		ioF:    b.Float("b.io", hal.IO),
		inB:    b.Bit("b.bit-in", hal.In),
		inU:    b.U32("b.u32-in", hal.In),
		inU64:  b.U64("b.u64-in", hal.In),
	}
	require.NoError(t, a.Ready())
	require.NoError(t, b.Ready())
	return p
}

func TestValueTypesRoundTrip(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	p := twoComps(t, h)
	p.outS.Set(-7)
	assert.Equal(t, int32(-7), p.outS.Get())
	p.outS64.Set(math.MinInt64)
	assert.Equal(t, int64(math.MinInt64), p.outS64.Get())
	p.inU.Set(math.MaxUint32)
	assert.Equal(t, uint32(math.MaxUint32), p.inU.Get())
	p.inU64.Set(math.MaxUint64)
	assert.Equal(t, uint64(math.MaxUint64), p.inU64.Get())
	p.outB.Set(true)
	assert.True(t, p.outB.Get())
	for name, want := range map[string]string{
		"a.s32-out": "-7", "b.u32-in": "4294967295", "b.u64-in": "18446744073709551615",
		"a.s64-out": "-9223372036854775808", "a.bit-out": "TRUE", "a.out": "0",
	} {
		got, err := h.GetP(name)
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
	}
}

// An unlinked In pin reads its own value, which setp sets; linked, it
// reads the signal; unlinked again, it keeps the signal's last value.
func TestPinOwnValueSignalAndUnlink(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	p := twoComps(t, h)
	require.NoError(t, h.SetP("b.in", "2.5"))
	assert.Equal(t, 2.5, p.inF.Get())
	p.outF.Set(1.25)
	require.NoError(t, h.Net("x", "a.out", "b.in"), "the first pin gives the signal its value")
	assert.Equal(t, 1.25, p.inF.Get())
	p.outF.Set(3)
	assert.Equal(t, 3.0, p.inF.Get())
	v, err := h.GetS("x")
	require.NoError(t, err)
	assert.Equal(t, "3", v)
	require.NoError(t, h.Unlink("b.in"))
	p.outF.Set(4)
	assert.Equal(t, 3.0, p.inF.Get(), "unlinked, the pin kept the signal's last value")
	require.NoError(t, h.Unlink("b.in"), "unlinking an unlinked pin is a no-op")
	require.NoError(t, h.Net("x", "b.in"), "net onto an existing signal")
	assert.Equal(t, 4.0, p.inF.Get())
	require.NoError(t, h.Net("x", "b.in"), "a pin already on the signal stays")
}

func TestNetRefusalsNameBothPins(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	twoComps(t, h)
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	c.Float("c.out", hal.Out)
	c.Float("c.io", hal.IO)
	require.NoError(t, c.Ready())

	err = h.Net("x", "a.out", "b.bit-in")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, `type mismatch: pin "b.bit-in" is bit, signal "x" is float of pin "a.out"`)

	require.NoError(t, h.Net("x", "a.out", "b.in"))
	err = h.Net("x", "c.out")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, `signal "x" already has OUT pin "a.out", cannot add OUT pin "c.out"`)
	err = h.Net("x", "c.io")
	assert.ErrorContains(t, err, `signal "x" has OUT pin "a.out", cannot add I/O pin "c.io"`)

	require.NoError(t, h.Net("y", "b.io", "c.io"), "I/O pins share a signal")
	err = h.Net("y", "c.out")
	assert.ErrorContains(t, err, `signal "y" has I/O pin "b.io", cannot add OUT pin "c.out"`)

	err = h.Net("x", "b.io")
	assert.ErrorContains(t, err, `pin "b.io" is linked to signal "y", cannot link it to "x"`)
	assert.ErrorContains(t, h.Net("z", "nope"), `pin "nope" does not exist`)
	assert.ErrorContains(t, h.Net("z", "x"), `"x" is a signal, not a pin`)
}

// A net is checked whole before any pin is linked: a refused net changes
// nothing and makes no signal.
func TestRefusedNetChangesNothing(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	twoComps(t, h)
	err := h.Net("x", "b.in", "a.out", "a.bit-out")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	s, err := h.View().Read()
	require.NoError(t, err)
	assert.Empty(t, s.Signals)
	for _, p := range s.Pins {
		assert.Empty(t, p.Signal, p.Name)
	}
	_, err = h.GetS("x")
	assert.ErrorIs(t, err, rtapi.ErrInvalid)
}

func TestSetPSetSRules(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	p := twoComps(t, h)
	require.NoError(t, h.SetP("a.gain", "0x10"))
	assert.Equal(t, 16.0, p.gain.Get())
	assert.ErrorContains(t, h.SetP("a.count", "1"), `parameter "a.count" is not writable`)
	assert.ErrorContains(t, h.SetP("a.out", "1"), `pin "a.out" is an OUT pin, not writable`)
	assert.ErrorContains(t, h.SetP("b.bit-in", "maybe"), `value "maybe" is not a bit`)
	assert.ErrorContains(t, h.SetP("b.u32-in", "-1"), `is not a u32`)
	require.NoError(t, h.SetP("b.bit-in", "TRUE"))
	assert.True(t, p.inB.Get())
	require.NoError(t, h.Net("x", "a.out", "b.in"))
	assert.ErrorContains(t, h.SetP("b.in", "1"), `pin "b.in" is connected to signal "x"`)
	assert.ErrorContains(t, h.SetS("x", "1"), `signal "x" already has writer pin "a.out"`)
	require.NoError(t, h.Net("y", "b.io"))
	require.NoError(t, h.SetS("y", "-2.5"), "an undriven signal")
	assert.Equal(t, -2.5, p.ioF.Get())
	require.NoError(t, h.NewSignal("z", hal.TypeS32))
	require.NoError(t, h.SetS("z", "-3"))
	v, _ := h.GetS("z")
	assert.Equal(t, "-3", v)
	assert.ErrorIs(t, h.SetP("nope", "1"), rtapi.ErrInvalid)
}

func TestNamesAndLimits(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	_, err = h.NewComponent("c")
	assert.ErrorIs(t, err, rtapi.ErrInvalid)
	long := "c." + string(make([]byte, hal.NameLen))
	c.Float("c.x", hal.In)
	c.Float("c.x", hal.Out) // duplicate: sticky error
	c.Float("c.y", hal.In)  // ignored after the error
	err = c.Ready()
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, `a pin named "c.x" exists`)

	d, err := h.NewComponent("d")
	require.NoError(t, err)
	d.Bit(long, hal.In)
	assert.ErrorIs(t, d.Ready(), rtapi.ErrInvalid)

	e, err := h.NewComponent("e")
	require.NoError(t, err)
	e.Bit("e.has space", hal.In)
	assert.ErrorIs(t, e.Ready(), rtapi.ErrInvalid)

	f, err := h.NewComponent("f")
	require.NoError(t, err)
	require.NoError(t, f.Ready())
	f.Bit("f.late", hal.In)
	assert.ErrorIs(t, f.Err(), rtapi.ErrState, "no pins after Ready")
	assert.ErrorIs(t, h.NewSignal("s", 0), rtapi.ErrInvalid)
}

// Inside a function, reading and writing pins allocates nothing.
func TestPinAccessAllocatesNothing(t *testing.T) {
	h, _ := openSim(t)
	p := twoComps(t, h)
	require.NoError(t, h.Net("x", "a.out", "b.in"))
	body := func() {
		p.outF.Set(p.inF.Get() + p.gain.Get())
		p.outB.Set(!p.inB.Get())
		p.outS64.Set(p.outS64.Get() + int64(p.inU.Get()))
	}
	assert.Zero(t, testing.AllocsPerRun(1000, body))
}

// A link changed while the threads run takes effect at a cycle boundary:
// every cycle after Net returns sees it.
func TestNetWhileRunning(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, clock := openSim(t)
	p := twoComps(t, h)
	_, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	var seen []float64
	_, err = h.Export("a.update", func(time.Duration, int64) { p.outF.Set(p.outF.Get() + 1) })
	require.NoError(t, err)
	_, err = h.Export("b.update", func(time.Duration, int64) { seen = append(seen, p.inF.Get()) })
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("a.update", "servo", hal.Last))
	require.NoError(t, h.AddFunct("b.update", "servo", hal.Last))
	require.NoError(t, h.Start())
	require.NoError(t, clock.Advance(2*time.Millisecond))
	require.NoError(t, h.Net("x", "a.out", "b.in"))
	require.NoError(t, clock.Advance(2*time.Millisecond))
	require.NoError(t, h.Unlink("b.in"))
	require.NoError(t, clock.Advance(time.Millisecond))
	require.NoError(t, h.Stop())
	assert.Equal(t, []float64{0, 0, 0, 4, 5, 5}, seen)
}

func BenchmarkPinReadWrite(b *testing.B) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(b, err)
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{})
	require.NoError(b, err)
	defer h.Close()
	c, _ := h.NewComponent("c")
	in := c.Float("c.in", hal.In)
	out := c.Float("c.out", hal.Out)
	require.NoError(b, c.Ready())
	b.Run("pin", func(b *testing.B) {
		for b.Loop() {
			out.Set(in.Get() + 1)
		}
	})
	b.Run("go-variable", func(b *testing.B) {
		var x, y float64
		p, q := &x, &y
		for b.Loop() {
			*q = *p + 1
		}
		_ = y
	})
	// Issue 41's yardstick: one atomic load and one atomic store, each
	// through a single pointer (what a pin could cost at best while
	// staying 64-bit atomic on 32-bit Linux and race-clean).
	b.Run("atomic-variable", func(b *testing.B) {
		var x, y atomic.Uint64
		p, q := &x, &y
		for b.Loop() {
			q.Store(math.Float64bits(math.Float64frombits(p.Load()) + 1))
		}
	})
}
