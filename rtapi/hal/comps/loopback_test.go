package comps_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// loopbackHAL is LinuxCNC's tests/counter-encoder.0 idea on a stepper
// machine's two threads: three stepgens in position mode, each channel's
// outputs wired into an encoder channel, the pulses made and counted in
// a 25 µs base thread, the counts captured in a 1 ms servo thread.
//
//   - channel 0, step/dir (step_type 0): step drives encoder.0's phase-A
//     in counter mode, dir its phase-B. encoder.c's counter mode counts
//     phase-A's rising edges up and ignores phase-B (lut_ctr is indexed
//     with SM_PHASE_B_MASK cleared), so it follows the stepgen only while
//     the motion is forward.
//   - channel 1, up/down (step_type 1): encoder has no up/down input;
//     up drives encoder.1's phase-A in counter mode, which counts the
//     forward steps; down is left unconnected and is checked to stay
//     low while moving forward.
//   - channel 2, quadrature (step_type 2): phase-A/B drive encoder.2's
//     phase-A/B in x4 mode, which counts both ways.
const loopbackHAL = `loadrt threads name1=base period1=25000 name2=servo period2=1000000
loadrt stepgen step_type=0,1,2
loadrt encoder num_chan=3

net s0-step stepgen.0.step    => encoder.0.phase-A
net s0-dir  stepgen.0.dir     => encoder.0.phase-B
net s1-up   stepgen.1.up      => encoder.1.phase-A
net s2-a    stepgen.2.phase-A => encoder.2.phase-A
net s2-b    stepgen.2.phase-B => encoder.2.phase-B
net pos-cmd => stepgen.0.position-cmd stepgen.1.position-cmd stepgen.2.position-cmd
net enable  => stepgen.0.enable stepgen.1.enable stepgen.2.enable

addf stepgen.make-pulses       base
addf encoder.update-counters   base
addf stepgen.capture-position  servo
addf encoder.capture-position  servo
addf stepgen.update-freq       servo

setp encoder.0.counter-mode 1
setp encoder.1.counter-mode 1
setp encoder.2.x4-mode 1
`

// loopbackCounts are, after a servo cycle, each channel's stepgen counts
// and encoder counts, and stepgen.1.down.
type loopbackCounts struct {
	step, enc [3]int64
	down      bool
}

func (r *rig) loopbackCounts() loopbackCounts {
	r.t.Helper()
	s, err := r.h.View().Read()
	require.NoError(r.t, err)
	var c loopbackCounts
	var seen int
	for _, p := range s.Pins {
		var comp string
		var n int
		var field string
		if _, err := fmt.Sscanf(p.Name, "%7s.%d.%s", &comp, &n, &field); err != nil || n > 2 {
			continue
		}
		v := int64(int32(uint32(p.Value)))
		switch {
		case comp == "stepgen" && field == "counts":
			require.Equal(r.t, hal.TypeS32, p.Type)
			c.step[n] = v
			seen++
		case comp == "encoder" && field == "counts":
			require.Equal(r.t, hal.TypeS32, p.Type)
			c.enc[n] = v
			seen++
		case comp == "stepgen" && n == 1 && field == "down":
			c.down = p.Value&1 != 0
			seen++
		}
	}
	require.Equal(r.t, 7, seen, "pins found")
	return c
}

// Each servo cycle, every encoder's count is within one count of the
// stepgen's it is wired to, while the axis accelerates, runs at maxvel
// and stops; on the way back only the quadrature channel follows, as
// LinuxCNC's counter mode counts rising edges whatever the direction.
func TestStepgenEncoderLoopback(t *testing.T) {
	r := load(t, loopbackHAL)
	const scale = 1000.0 // steps per unit
	for n := range 3 {
		r.setp(fmt.Sprintf("stepgen.%d.position-scale", n), scale)
		r.setp(fmt.Sprintf("stepgen.%d.maxvel", n), 4.0)    // 4000 steps/s: 10 base cycles a step
		r.setp(fmt.Sprintf("stepgen.%d.maxaccel", n), 40.0) // 0.1 s to maxvel
	}
	require.NoError(t, r.h.SetS("enable", "1"))
	require.NoError(t, r.h.SetS("pos-cmd", "1"))

	// Forward to 1 unit: 1000 steps, 0.35 s; run 0.5 s.
	var prev loopbackCounts
	var steady int // servo cycles at full speed: 4 steps each
	for i := range 500 {
		r.cycles("servo", 1)
		c := r.loopbackCounts()
		for n := range 3 {
			require.LessOrEqual(t, math.Abs(float64(c.enc[n]-c.step[n])), 1.0,
				"cycle %d channel %d: encoder %d, stepgen %d", i, n, c.enc[n], c.step[n])
			require.GreaterOrEqual(t, c.step[n], prev.step[n], "cycle %d channel %d: forward only", i, n)
		}
		require.False(t, c.down, "cycle %d: stepgen.1.down while moving forward", i)
		if c.step[0]-prev.step[0] == 4 {
			steady++
		}
		prev = c
	}
	assert.Greater(t, steady, 100, "servo cycles at maxvel")
	for n := range 3 {
		assert.Equal(t, int64(1000), prev.step[n], "channel %d reached the command", n)
	}
	assert.Equal(t, int64(1000), prev.enc[0])
	assert.Equal(t, int64(1000), prev.enc[1])
	// stepgen.c sets the quadrature outputs to master_lut's first entry,
	// phase-A high, before any step: the encoder counts that edge, as the
	// first line of LinuxCNC's counter-encoder.0/expected (1 1 1) shows.
	assert.Equal(t, int64(1001), prev.enc[2], "quadrature: the first edge, then every step")

	// Back to -0.5 unit: 1500 steps down.
	require.NoError(t, r.h.SetS("pos-cmd", "-0.5"))
	sawDown := false
	for i := range 600 {
		r.cycles("servo", 1)
		c := r.loopbackCounts()
		require.LessOrEqual(t, c.step[0], prev.step[0], "cycle %d: backward only", i)
		require.LessOrEqual(t, math.Abs(float64(c.enc[2]-c.step[2])), 1.0,
			"cycle %d quadrature: encoder %d, stepgen %d", i, c.enc[2], c.step[2])
		// Counter mode: step/dir counts every step up; up/down holds.
		require.Equal(t, int64(1000)+(1000-c.step[0]), c.enc[0], "cycle %d step/dir in counter mode", i)
		require.Equal(t, int64(1000), c.enc[1], "cycle %d up/down: no rising edge on up", i)
		sawDown = sawDown || c.down
		prev = c
	}
	assert.True(t, sawDown, "stepgen.1.down pulsed while moving backward")
	for n := range 3 {
		assert.Equal(t, int64(-500), prev.step[n], "channel %d reached the command", n)
	}
	assert.Equal(t, int64(-499), prev.enc[2])
}
