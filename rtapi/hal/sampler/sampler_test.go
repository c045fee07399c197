package sampler_test

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// consistent is a .hal file whose sampler sees siggen's sawtooth (a value
// that changes every cycle) and its negation, both written earlier in the
// same thread, and a bit and an s64 besides.
const consistent = `
loadrt threads name1=fast period1=100000
loadrt siggen
loadrt scale
loadrt sampler cfg=ffbl,F depth=%d
setp siggen.0.frequency 1234.5
setp scale.0.gain -1
net saw siggen.0.sawtooth => scale.0.in sampler.0.pin.0
net neg scale.0.out => sampler.0.pin.1
net clk siggen.0.clock => sampler.0.pin.2
addf siggen.0.update fast
addf scale.0 fast
addf sampler.0 fast
start
`

type rig struct {
	h     *hal.HAL
	clock *sim.Controller
	th    *hal.Thread
	dir   string
}

func load(t *testing.T, src string) *rig {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	dir := t.TempDir()
	h, err := hal.New(rt, hal.Options{ShmDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	cmds, err := halfile.Parse(t.Name()+".hal", strings.NewReader(src))
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	clock, err := sim.New(rt)
	require.NoError(t, err)
	th, ok := h.Thread("fast")
	require.True(t, ok)
	return &rig{h, clock, th, dir}
}

func (r *rig) attach(t *testing.T, channel int) *sampler.Reader {
	t.Helper()
	rd, err := sampler.Attach(shm.Options{Dir: r.dir, Instance: r.h.RT().Instance()}, channel)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rd.Close() })
	return rd
}

func (r *rig) pin(t *testing.T, name string) uint64 {
	t.Helper()
	s, err := r.h.View().Read()
	require.NoError(t, err)
	for _, p := range s.Pins {
		if p.Name == name {
			return p.Value
		}
	}
	t.Fatalf("no pin %s", name)
	return 0
}

func drain(t *testing.T, rd *sampler.Reader) []sampler.Sample {
	t.Helper()
	var out []sampler.Sample
	for {
		s, err := rd.TryNext()
		if errors.Is(err, ipc.ErrEmpty) {
			return out
		}
		require.NoError(t, err)
		s.Values = append([]uint64(nil), s.Values...)
		out = append(out, s)
	}
}

// Every cycle is one sample, numbered from 0, taken at its cycle's time,
// with both pins from that cycle: pin.1 is always -pin.0 although pin.0
// changes every cycle.
func TestSamplerOneRecordPerCycle(t *testing.T) {
	r := load(t, strings.ReplaceAll(consistent, "%d", "1000"))
	rd := r.attach(t, 0)
	assert.Equal(t, []hal.Type{hal.TypeFloat, hal.TypeFloat, hal.TypeBit, hal.TypeS64}, rd.Types())
	require.NoError(t, r.clock.RunCycles(r.th.Task(), 500))
	got := drain(t, rd)
	require.Len(t, got, 500)
	for i, s := range got {
		require.EqualValues(t, i, s.Cycle)
		require.Zero(t, s.Dropped)
		a, b := math.Float64frombits(s.Values[0]), math.Float64frombits(s.Values[1])
		require.Equal(t, -a, b, "cycle %d", i)
		if i > 0 {
			assert.Equal(t, int64(100_000), s.Time-got[i-1].Time, "cycle %d", i)
			assert.NotEqual(t, got[i-1].Values[0], s.Values[0], "the sawtooth moves every cycle")
		}
	}
	assert.EqualValues(t, 499, r.pin(t, "sampler.0.sample-num"))
	n, err := rd.Buffered()
	require.NoError(t, err)
	assert.Zero(t, n, "all read")
	require.NoError(t, r.clock.RunCycles(r.th.Task(), 7))
	n, err = rd.Buffered()
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	assert.Len(t, drain(t, rd), 7)
	assert.EqualValues(t, 7, r.pin(t, "sampler.0.curr-depth"), "the fill as of the last cycle")

	// the second channel is there, with its own ring
	rd1 := r.attach(t, 1)
	assert.Equal(t, []hal.Type{hal.TypeFloat}, rd1.Types())
	assert.Empty(t, drain(t, rd1), "sampler.1 is not on a thread")
}

// A full ring drops samples and counts them: in overruns, full, and in
// the next sample that fits, whose cycle number shows the gap. As in
// LinuxCNC, depth 10 holds 9 samples and curr-depth then reads 10.
func TestSamplerCountsDropsWhenFull(t *testing.T) {
	r := load(t, strings.ReplaceAll(consistent, "%d", "10"))
	rd := r.attach(t, 0)
	require.NoError(t, r.clock.RunCycles(r.th.Task(), 200))
	assert.EqualValues(t, 10, r.pin(t, "sampler.0.curr-depth"))
	assert.EqualValues(t, 1, r.pin(t, "sampler.0.full"))
	assert.EqualValues(t, 200-9, r.pin(t, "sampler.0.overruns"))
	first := drain(t, rd)
	require.Len(t, first, 9)
	require.NoError(t, r.clock.RunCycles(r.th.Task(), 1))
	next := drain(t, rd)
	require.Len(t, next, 1)
	assert.EqualValues(t, 200, next[0].Cycle)
	assert.EqualValues(t, 200-9, next[0].Dropped)
	assert.Equal(t, next[0].Cycle-first[len(first)-1].Cycle-1, next[0].Dropped, "the gap is the drops")
	assert.EqualValues(t, 0, r.pin(t, "sampler.0.full"))
	assert.EqualValues(t, 1, r.pin(t, "sampler.0.curr-depth"))
}

// enable FALSE stops sampling; the cycles go on being counted.
func TestSamplerEnable(t *testing.T) {
	r := load(t, strings.ReplaceAll(consistent, "%d", "100"))
	rd := r.attach(t, 0)
	require.NoError(t, r.h.SetP("sampler.0.enable", "0"))
	require.NoError(t, r.clock.RunCycles(r.th.Task(), 5))
	assert.Empty(t, drain(t, rd))
	require.NoError(t, r.h.SetP("sampler.0.enable", "1"))
	require.NoError(t, r.clock.RunCycles(r.th.Task(), 1))
	got := drain(t, rd)
	require.Len(t, got, 1)
	assert.EqualValues(t, 5, got[0].Cycle)
	assert.Zero(t, got[0].Dropped)
}

func TestSamplerLoadArgs(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	defer rt.Close()
	for _, args := range [][]string{
		nil, {"cfg="}, {"cfg=fx"}, {"cfg=f", "depth=0"}, {"cfg=f", "depth=1,2"},
		{"cfg=f", "depth=-3"}, {"cfg=" + strings.Repeat("f", sampler.MaxPins+1)},
		{"cfg=" + strings.Repeat("f,", sampler.MaxChannels) + "f"},
		{"cfg=" + strings.Repeat("f", sampler.MaxPins), "depth=100000000"},
	} {
		h, err := hal.New(rt, hal.Options{ShmDir: t.TempDir()})
		require.NoError(t, err)
		err = h.LoadRT("sampler", args...)
		assert.ErrorIs(t, err, rtapi.ErrInvalid, "%q", args)
		require.NoError(t, h.Close())
	}
}

// Close removes the channels' segments.
func TestSamplerSegmentsRemovedOnClose(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	defer rt.Close()
	dir := t.TempDir()
	h, err := hal.New(rt, hal.Options{ShmDir: dir})
	require.NoError(t, err)
	require.NoError(t, h.LoadRT("sampler", "cfg=f,b"))
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	assert.Len(t, names, 2)
	require.NoError(t, h.Close())
	names, _ = filepath.Glob(filepath.Join(dir, "*"))
	assert.Empty(t, names)
	_, err = sampler.Attach(shm.Options{Dir: dir, Instance: rt.Instance()}, 0)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// Next returns ErrTimeout at its deadline when nothing comes.
func TestReaderNextDeadline(t *testing.T) {
	r := load(t, strings.ReplaceAll(consistent, "%d", "10"))
	rd := r.attach(t, 0)
	_, err := rd.Next(time.Now().Add(10 * time.Millisecond))
	assert.ErrorIs(t, err, rtapi.ErrTimeout)
	require.NoError(t, r.clock.RunCycles(r.th.Task(), 1))
	s, err := rd.Next(time.Time{})
	require.NoError(t, err)
	assert.Zero(t, s.Cycle)
}
