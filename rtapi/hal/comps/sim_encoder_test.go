package comps_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopback: sim_encoder drives encoder, pulses and counting on a 50 µs
// base thread, speed and capture on a 1 ms servo thread, as
// sim_encoder(9) and encoder(9) run them.
const loopback = `loadrt threads name1=base period1=50000 name2=servo period2=1000000
loadrt sim_encoder
loadrt encoder num_chan=1
addf sim-encoder.make-pulses base
addf encoder.update-counters base
addf sim-encoder.update-speed servo
addf encoder.capture-position servo
net A sim-encoder.0.phase-A => encoder.0.phase-A
net B sim-encoder.0.phase-B => encoder.0.phase-B
net Z sim-encoder.0.phase-Z => encoder.0.phase-Z
setp encoder.0.position-scale 400
`

// sim_encoder's quadrature, fed to encoder on the same base thread,
// loses no edge: encoder's rawcounts are sim_encoder's plus one, as in
// LinuxCNC (sim_encoder's state 0 shows phase-A high, and encoder, which
// starts from both low, counts that first edge); counts equal them until
// an index, position is counts / 400 (ppr 100, x4), and the index comes
// where sim_encoder's rawcounts are a multiple of 4 * ppr, both ways.
func TestSimEncoderLoopback(t *testing.T) {
	t.Parallel()
	r := load(t, loopback)
	r.setp("sim-encoder.0.speed", 5.0) // rev/s: 2000 counts/s
	for range 10 {
		r.cycles("servo", 5)
		raw := r.get("sim-encoder.0.rawcounts") + 1
		require.Equal(t, raw, r.get("encoder.0.rawcounts"))
		require.Equal(t, raw, r.get("encoder.0.counts"))
		require.Equal(t, raw*(1.0/400), r.get("encoder.0.position"))
	}
	assert.InDelta(t, 100.0, r.get("encoder.0.counts"), 2, "50 ms at 2000 counts/s")

	r.setp("sim-encoder.0.speed", 30.0) // 12000 counts/s
	r.setp("encoder.0.index-enable", true)
	for i := 0; r.get("encoder.0.index-enable") == 1; i++ {
		require.Less(t, i, 100, "no index in 100 ms at 30 rev/s")
		r.cycles("servo", 1)
	}
	raw, counts := r.get("sim-encoder.0.rawcounts"), r.get("encoder.0.counts")
	assert.Equal(t, raw+1, r.get("encoder.0.rawcounts"))
	assert.Greater(t, raw, 400.0)
	assert.Zero(t, int(raw-counts)%400, "index at a multiple of 4 * ppr: rawcounts %v counts %v", raw, counts)
	assert.Less(t, counts, 20.0)

	r.setp("sim-encoder.0.speed", -30.0)
	r.cycles("servo", 60) // back through the index
	raw, counts = r.get("sim-encoder.0.rawcounts"), r.get("encoder.0.counts")
	assert.Equal(t, raw+1, r.get("encoder.0.rawcounts"))
	assert.Less(t, counts, 0.0)
	assert.Zero(t, int(raw-counts)%400)
	assert.InDelta(t, -30.0, r.get("encoder.0.velocity"), 30*0.1)
}

// At 2000 counts/s on a 50 µs base thread, sim_encoder's addval is
// trunc(2000 * 2^31 * 50e-6) = 214748364, a hair under 2^31 / 10: a count
// every 10 base periods for the whole test, two per servo period. So
// encoder's velocity is exactly encoder.c's (2 * scale) / (1e6 * 1e-9).
func TestSimEncoderVelocityExact(t *testing.T) {
	t.Parallel()
	r := load(t, loopback)
	r.setp("sim-encoder.0.speed", 5.0)
	scale := 1.0 / 400.0
	dt := 1000000.0
	want := (2 * scale) / (dt * 1e-9)
	r.cycles("servo", 3)
	for i := range 100 {
		r.cycles("servo", 1)
		require.Equal(t, want, r.get("encoder.0.velocity"), "servo cycle %d", i)
		require.Equal(t, want*60.0, r.get("encoder.0.velocity-rpm"))
	}
	assert.InDelta(t, 5.0, want, 1e-12)
}

// sim_encoder.c with a 64-bit long: at the frequency limit on a 50 µs
// thread addval is exactly 2^31, and its direction, addval >> 31 in an
// int, is 1: it steps backwards, once a period. On a 20 µs thread the
// product rounds to 2^31 - 1 and it steps forwards (nearly) every period.
func TestSimEncoderLimit(t *testing.T) {
	t.Parallel()
	r := load(t, `loadrt threads name1=base period1=50000 name2=servo period2=1000000
loadrt sim_encoder
addf sim-encoder.make-pulses base
addf sim-encoder.update-speed servo
setp sim-encoder.0.speed 1e6
`)
	r.cycles("servo", 2)
	first := r.get("sim-encoder.0.rawcounts")
	r.cycles("servo", 1)
	assert.Equal(t, first-20, r.get("sim-encoder.0.rawcounts"), "one count down a base period")

	r = load(t, `loadrt threads name1=base period1=20000 name2=servo period2=1000000
loadrt sim_encoder
addf sim-encoder.make-pulses base
addf sim-encoder.update-speed servo
setp sim-encoder.0.speed 1e6
`)
	r.cycles("servo", 2)
	first = r.get("sim-encoder.0.rawcounts")
	r.cycles("servo", 1)
	assert.InDelta(t, first+50, r.get("sim-encoder.0.rawcounts"), 1, "about one count up a base period")
}

// phase-A, phase-B follow the quadrature state (0: A, 1: AB, 2: B,
// 3: none), phase-Z is state 0 of pulse 0; scale divides speed; ppr is
// read by make-pulses as it wraps.
func TestSimEncoderPhases(t *testing.T) {
	t.Parallel()
	r := load(t, `loadrt threads name1=t period1=1000000
loadrt sim_encoder
addf sim-encoder.update-speed t
addf sim-encoder.make-pulses t
setp sim-encoder.0.ppr 2
setp sim-encoder.0.scale 2
`)
	r.cycles("t", 1)
	abz := func() [3]float64 {
		return [3]float64{r.get("sim-encoder.0.phase-A"), r.get("sim-encoder.0.phase-B"), r.get("sim-encoder.0.phase-Z")}
	}
	assert.Equal(t, [3]float64{1, 0, 1}, abz())
	// 1 ms thread: maxf 1000 counts/s; speed 1000 / scale 2 = 500 rev/s
	// * 2 ppr * 4 = 4000 counts/s, limited to 1000: addval 2^31, which
	// steps backwards (see TestSimEncoderLimit).
	r.setp("sim-encoder.0.speed", 1000.0)
	var got [][3]float64
	for range 9 {
		r.cycles("t", 1)
		got = append(got, abz())
	}
	assert.Equal(t, [][3]float64{
		{0, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, 0, 0},
		{0, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, 0, 1},
		{0, 0, 0},
	}, got)
	assert.Equal(t, -9.0, r.get("sim-encoder.0.rawcounts"))
	// A little below the limit it runs forwards, a count a cycle.
	r.setp("sim-encoder.0.speed", 999.0*2/8)
	r.cycles("t", 2) // the first cycle applies the new addval
	before := r.get("sim-encoder.0.rawcounts")
	r.cycles("t", 4)
	assert.InDelta(t, before+4, r.get("sim-encoder.0.rawcounts"), 1)
	// scale 0 is taken as 1, and written back.
	r.setp("sim-encoder.0.scale", 0.0)
	r.cycles("t", 1)
	assert.Equal(t, 1.0, r.get("sim-encoder.0.scale"))
}
