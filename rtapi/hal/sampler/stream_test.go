package sampler_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// loopback streams two pins into a sampler through abs, as LinuxCNC's
// tests/abs.0 does.
const loopback = `
loadrt threads name1=fast period1=100000
loadrt streamer cfg=fs depth=8
loadrt sampler cfg=fsfb depth=100
loadrt abs
net in streamer.0.pin.0 => abs.0.in sampler.0.pin.0
net n streamer.0.pin.1 => sampler.0.pin.1
net out abs.0.out => sampler.0.pin.2
net empty streamer.0.empty => sampler.0.pin.3
addf streamer.0 fast
addf abs.0 fast
addf sampler.0 fast
start
`

// Lines written by a Writer reach the pins one a cycle, and a sampler in
// the same thread sees them: the FIFO's 7 samples, then underruns with
// the last values held.
func TestStreamerToSampler(t *testing.T) {
	r := load(t, loopback)
	w, err := sampler.AttachWriter(shm.Options{Dir: r.dir, Instance: r.h.RT().Instance()}, 0)
	require.NoError(t, err)
	defer w.Close()
	assert.Equal(t, []hal.Type{hal.TypeFloat, hal.TypeS32}, w.Types())
	in := []float64{0, 0.25, -0.25, 1, -1, 64, -64, 99}
	for i, f := range in[:7] {
		require.NoError(t, w.TryWrite([]uint64{math.Float64bits(f), uint64(int64(-i))}))
	}
	assert.ErrorIs(t, w.TryWrite([]uint64{0, 0}), sampler.ErrFull)
	assert.ErrorIs(t, w.TryWrite([]uint64{0}), rtapi.ErrInvalid, "one value per pin")
	rd := r.attach(t, 0)
	require.NoError(t, r.clock.RunCycles(r.th.Task(), 9))
	for i := range 9 {
		s, err := rd.TryNext()
		require.NoError(t, err)
		k := min(i, 6)
		var line []byte
		for j, v := range s.Values {
			line = sampler.AppendLinuxCNC(line, rd.Types()[j], v)
		}
		f := in[k]
		want := strings.Join([]string{ftoa(f), itoa(-k), ftoa(math.Abs(f)), btoa(i >= 7)}, " ") + " "
		assert.Equal(t, want, string(line), "cycle %d", i)
	}
	got, err := r.h.GetP("streamer.0.underruns")
	require.NoError(t, err)
	assert.Equal(t, "2", got)
	got, err = r.h.GetP("streamer.0.curr-depth")
	require.NoError(t, err)
	assert.Equal(t, "0", got)

	// the writer refills: the stream goes on
	require.NoError(t, w.Write(context.Background(), []uint64{math.Float64bits(in[7]), 5}))
	require.NoError(t, r.clock.RunCycles(r.th.Task(), 1))
	got, err = r.h.GetP("streamer.0.pin.0")
	require.NoError(t, err)
	assert.Equal(t, "99", got)
}

func ftoa(f float64) string {
	return strings.TrimSuffix(string(sampler.AppendLinuxCNC(nil, hal.TypeFloat, math.Float64bits(f))), " ")
}

func itoa(i int) string {
	return strings.TrimSuffix(string(sampler.AppendLinuxCNC(nil, hal.TypeS32, uint64(int64(i)))), " ")
}

func btoa(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func TestStreamerLoadArgs(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	defer rt.Close()
	for _, args := range [][]string{
		nil, {"cfg="}, {"cfg=fx"}, {"cfg=f", "depth=0"}, {"cfg=f", "depth=1"}, {"cfg=f", "depth=1,2"},
		{"cfg=f", "depth=-3"}, {"cfg=" + strings.Repeat("f", sampler.MaxPins+1)},
		{"cfg=" + strings.Repeat("f,", sampler.MaxStreamChannels) + "f"},
		{"cfg=" + strings.Repeat("f", sampler.MaxPins), "depth=100000000"},
	} {
		h, err := hal.New(rt, hal.Options{ShmDir: t.TempDir()})
		require.NoError(t, err)
		err = h.LoadRT("streamer", args...)
		assert.ErrorIs(t, err, rtapi.ErrInvalid, "%q", args)
		require.NoError(t, h.Close())
	}
}

// loadrt streamer makes LinuxCNC's pins with its initial values, and
// Close removes the FIFOs' segments.
func TestStreamerPinsAndSegments(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	defer rt.Close()
	dir := t.TempDir()
	h, err := hal.New(rt, hal.Options{ShmDir: dir})
	require.NoError(t, err)
	require.NoError(t, h.LoadRT("streamer", "cfg=fbsulk,B", "depth=10"))
	for pin, want := range map[string]string{
		"streamer.0.pin.0": "0", "streamer.0.pin.1": "FALSE", "streamer.0.pin.5": "0", "streamer.1.pin.0": "FALSE",
		"streamer.0.empty": "TRUE", "streamer.0.enable": "TRUE", "streamer.0.curr-depth": "0",
		"streamer.0.underruns": "0", "streamer.0.clock": "FALSE", "streamer.0.clock-mode": "0",
	} {
		got, err := h.GetP(pin)
		require.NoError(t, err, pin)
		assert.Equal(t, want, got, pin)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	assert.Len(t, names, 2, "two FIFOs")
	require.NoError(t, h.Close())
	names, _ = filepath.Glob(filepath.Join(dir, "*"))
	assert.Empty(t, names)
}
