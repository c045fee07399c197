package main

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
)

func simConfig(jitter, stddev time.Duration) Config {
	return Config{Seconds: 10, Seed: 1, Jitter: jitter, StdDev: stddev, Options: rtapi.Options{Flavor: "sim"}}
}

// Ten simulated seconds with 30 ± 15 µs of wake-up jitter: the following
// error stays within bound, and a second run — on one CPU or many —
// reproduces every sampled error to the bit.
func TestFollowingErrorBoundWithJitter(t *testing.T) {
	cfg := simConfig(30*time.Microsecond, 15*time.Microsecond)
	res, err := Run(cfg)
	require.NoError(t, err)
	require.EqualValues(t, 9999, res.Cycles)
	require.Less(t, res.MaxError, 40e-6, "max following error (m)")
	require.Less(t, res.RMSError, 4e-6, "RMS following error (m)")
	require.Zero(t, res.Stats.Overruns)
	require.InDelta(t, float64(30*time.Microsecond), float64(res.Stats.Latency.Mean()), float64(time.Microsecond))

	for _, procs := range []int{1, 8} {
		old := runtime.GOMAXPROCS(procs)
		again, err := Run(cfg)
		runtime.GOMAXPROCS(old)
		require.NoError(t, err)
		require.Equal(t, math.Float64bits(res.MaxError), math.Float64bits(again.MaxError), "GOMAXPROCS=%d", procs)
		require.Equal(t, math.Float64bits(res.RMSError), math.Float64bits(again.RMSError))
		require.Equal(t, res.ErrorsHash, again.ErrorsHash, "every sampled error, bit for bit")
		require.Equal(t, res.Digest, again.Digest, "the same schedule")
	}
}

// The jitter is what the following error comes from: more lateness, more
// error; another seed, other draws.
func TestJitterDrivesFollowingError(t *testing.T) {
	none, err := Run(simConfig(0, 0))
	require.NoError(t, err)
	some, err := Run(simConfig(30*time.Microsecond, 15*time.Microsecond))
	require.NoError(t, err)
	lots, err := Run(simConfig(200*time.Microsecond, 100*time.Microsecond))
	require.NoError(t, err)
	require.Less(t, none.RMSError, some.RMSError)
	require.Less(t, 3*some.RMSError, lots.RMSError)

	other := simConfig(30*time.Microsecond, 15*time.Microsecond)
	other.Seed = 2
	res, err := Run(other)
	require.NoError(t, err)
	require.NotEqual(t, some.ErrorsHash, res.ErrorsHash)
}

func TestRunMisuse(t *testing.T) {
	_, err := Run(Config{Seconds: 0, Options: rtapi.Options{Flavor: "sim"}})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	_, err = Run(Config{Seconds: 1, Options: rtapi.Options{Flavor: "nonesuch"}})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
}

func TestCommandLine(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-seconds", "1"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "following error: max")
	require.Contains(t, out.String(), "trace digest")
	out.Reset()
	require.Equal(t, 2, run([]string{"-nonesuch"}, &out, &errOut))
	require.Equal(t, 2, run([]string{"-seconds", "-1"}, &out, &errOut), "a bad value is a usage error")
	require.Equal(t, 2, run([]string{"extra"}, &out, &errOut), "simpid takes no argument")
	errOut.Reset()
	require.Equal(t, 0, run([]string{"-h"}, &out, &errOut))
	require.True(t, strings.HasPrefix(errOut.String(), "usage: simpid "), "%s", errOut.String())
}

// The same loop runs unchanged on the real clock (no timing asserted:
// this machine's jitter is not ours to promise, and on a loaded machine
// a long enough stall can even make the loop lose the axis).
func TestRunsOnPosix(t *testing.T) {
	res, err := Run(Config{Seconds: 0.2, Options: rtapi.Options{Flavor: "posix"}})
	if errors.Is(err, ErrUnstable) {
		t.Logf("posix run lost the axis on this machine: %v", err)
		return
	}
	require.NoError(t, err)
	require.Positive(t, res.Cycles)
	require.Zero(t, res.Digest)
}
