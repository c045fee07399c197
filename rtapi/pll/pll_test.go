package pll_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/pll"
)

// A loop closed on a model of the release grid: the PI removes an
// initial phase error and settles at a correction equal to the drift.
func TestPIConvergesOnDrift(t *testing.T) {
	t.Parallel()
	const period = int64(time.Millisecond)
	for _, tc := range []struct {
		name  string
		drift int64 // ns per period the external clock runs slower
		start int64 // initial phase error
	}{
		{"fast 100 ppm", 100, -30_000},
		{"slow 50 ppm", -50, 20_000},
		{"no drift", 0, 5_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pi := pll.PI{Kp: 0.5, Ki: 0.05, Limit: 10 * time.Microsecond}
			release, event := int64(0), -tc.start
			var c time.Duration
			for k := 0; k < 500; k++ {
				c = pi.Update(release - event)
				require.LessOrEqual(t, c.Abs(), 10*time.Microsecond, "the limit holds")
				release += period + int64(c)
				event += period + tc.drift
			}
			require.Zero(t, release-event, "phase error")
			require.EqualValues(t, tc.drift, c, "correction = drift per period")
		})
	}
}

func TestPIReset(t *testing.T) {
	pi := pll.PI{Kp: 0, Ki: 1}
	require.EqualValues(t, -10, pi.Update(10))
	require.EqualValues(t, -20, pi.Update(10))
	pi.Reset()
	require.EqualValues(t, -10, pi.Update(10))
	require.Zero(t, testing.AllocsPerRun(100, func() { pi.Update(3) }))
}
