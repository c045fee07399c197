package comps_test

import (
	"io"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// runLoop loads testdata/servo-loop.hal on the sim flavor, runs it for
// four seconds of virtual time and returns the feedback and the
// following error of every millisecond.
func runLoop(t *testing.T) (fb, ferr []float64) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 7}})
	require.NoError(t, err)
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	defer h.Close()
	f, err := os.Open("testdata/servo-loop.hal")
	require.NoError(t, err)
	defer f.Close()
	cmds, err := halfile.Parse("testdata/servo-loop.hal", f)
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	require.True(t, h.Running(), "the file ends with start")
	clock, err := sim.New(rt)
	require.NoError(t, err)
	d := h.View()
	for range 4000 {
		require.NoError(t, clock.Advance(time.Millisecond))
		s, err := d.Read()
		require.NoError(t, err)
		for _, p := range s.Pins {
			switch p.Name {
			case "pid.0.feedback":
				fb = append(fb, math.Float64frombits(p.Value))
			case "pid.0.error":
				ferr = append(ferr, math.Float64frombits(p.Value))
			}
		}
	}
	require.NoError(t, h.Stop())
	return fb, ferr
}

// The .hal file's pid closes the loop on the simulated axis: after a
// second the axis follows the 10-unit sine within 0.05 units, and two
// runs agree bit for bit.
func TestServoLoopOnVirtualTime(t *testing.T) {
	fb, ferr := runLoop(t)
	worst := 0.0
	for _, e := range ferr[1000:] {
		worst = math.Max(worst, math.Abs(e))
	}
	t.Logf("worst following error after 1 s: %.4g", worst)
	assert.Less(t, worst, 0.05)
	peak := 0.0
	for _, v := range fb {
		peak = math.Max(peak, v)
	}
	assert.InDelta(t, 10, peak, 0.05, "the axis reaches the sine's peak")

	fb2, _ := runLoop(t)
	require.Equal(t, len(fb), len(fb2))
	for i := range fb {
		if math.Float64bits(fb[i]) != math.Float64bits(fb2[i]) {
			t.Fatalf("cycle %d: %v, then %v", i, fb[i], fb2[i])
		}
	}
}
