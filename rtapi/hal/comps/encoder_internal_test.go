package comps

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// encoder's and sim_encoder's four functions allocate nothing: they run
// on the real-time threads, update-counters and make-pulses every base
// period.
func TestEncoderHotPathsDoNotAllocate(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	c, err := h.NewComponent("encoder")
	require.NoError(t, err)
	e := newEncoder(c, []string{"encoder.0", "encoder.1", "encoder.2"})
	sc, err := h.NewComponent("sim_encoder")
	require.NoError(t, err)
	s := newSimEncoder(sc, []string{"sim-encoder.0"})
	require.NoError(t, c.Ready())
	require.NoError(t, sc.Ready())
	s.chans[0].speed.Set(7.5)
	e.chans[0].missingTeeth.Set(2)
	e.chans[0].indexEna.Set(true)
	e.chans[0].latchIn.Set(true)
	n := 0
	if a := testing.AllocsPerRun(1000, func() {
		n++
		s.makePulses(50*time.Microsecond, 0)
		ch := &s.chans[0]
		e.chans[0].phaseA.Set(ch.phaseA.Get())
		e.chans[0].phaseB.Set(ch.phaseB.Get())
		e.chans[0].phaseZ.Set(ch.phaseZ.Get())
		e.chans[0].latchIn.Set(n%7 == 0)
		e.update(50*time.Microsecond, 0)
		if n%20 == 0 {
			s.updateSpeed(time.Millisecond, 0)
			e.capture(time.Millisecond, 0)
		}
	}); a != 0 {
		t.Errorf("encoder and sim_encoder: %v allocations", a)
	}
	assert.NotZero(t, e.chans[0].rawCounts.Get(), "the encoder counted")
}

// update-counters and capture-position, and make-pulses and
// update-speed, may run at once on two threads: every variable they
// share is atomic (run with -race). The counts that reach
// capture-position add up to rawcounts.
func TestEncoderHandoffConcurrent(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	c, err := h.NewComponent("encoder")
	require.NoError(t, err)
	e := newEncoder(c, []string{"encoder.0"})
	sc, err := h.NewComponent("sim_encoder")
	require.NoError(t, err)
	s := newSimEncoder(sc, []string{"sim-encoder.0"})
	require.NoError(t, c.Ready())
	require.NoError(t, sc.Ready())
	s.chans[0].speed.Set(1000)
	e.chans[0].indexEna.Set(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20000 {
			s.makePulses(50*time.Microsecond, 0)
			ch := &s.chans[0]
			e.chans[0].phaseA.Set(ch.phaseA.Get())
			e.chans[0].phaseB.Set(ch.phaseB.Get())
			e.chans[0].phaseZ.Set(ch.phaseZ.Get())
			e.update(50*time.Microsecond, 0)
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		s.updateSpeed(time.Millisecond, 0)
		e.capture(time.Millisecond, 0)
	}
	e.capture(time.Millisecond, 0)
	e.capture(time.Millisecond, 0)
	ch := &e.chans[0]
	assert.Equal(t, ch.rawCounts.Get(), ch.rawCount, "the last count reached capture-position")
	assert.NotZero(t, ch.rawCount)
}

// cStrtol reads as C's strtol(s, &end, 0) with *end == 0 required.
func TestCStrtol(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int64{
		"": 0, "0": 0, "3": 3, " 3": 3, "+3": 3, "-3": -3, "0x1f": 31, "0X1F": 31,
		"010": 8, "-010": -8, "9223372036854775807": math.MaxInt64,
		"9223372036854775808": math.MaxInt64, "-9223372036854775808": math.MinInt64,
		"-99999999999999999999": math.MinInt64, "99999999999999999999999": math.MaxInt64,
	} {
		got, err := cStrtol(s)
		if assert.NoError(t, err, "%q", s) {
			assert.Equal(t, want, got, "%q", s)
		}
	}
	for _, s := range []string{" ", "-", "3 ", "0x", "0xg", "08", "1_000", "0b1", "3x", "x"} {
		_, err := cStrtol(s)
		assert.ErrorIs(t, err, rtapi.ErrInvalid, "%q", s)
	}
}

// cvttsd2si32 and cvttsd2si64 are x86-64's conversions: out of range
// and NaN give the minimum integer.
func TestCvttsd2si(t *testing.T) {
	t.Parallel()
	assert.Equal(t, int32(-2), cvttsd2si32(-2.9))
	assert.Equal(t, int32(math.MaxInt32), cvttsd2si32(2147483647.9))
	assert.Equal(t, int32(math.MinInt32), cvttsd2si32(2147483648))
	assert.Equal(t, int32(math.MinInt32), cvttsd2si32(-2147483648.5))
	assert.Equal(t, int32(math.MinInt32), cvttsd2si32(math.NaN()))
	assert.Equal(t, int64(math.MinInt64), cvttsd2si64(math.Inf(1)))
	assert.Equal(t, int64(math.MinInt64), cvttsd2si64(math.NaN()))
	assert.Equal(t, int64(1<<31), cvttsd2si64(2147483648.7))
}
