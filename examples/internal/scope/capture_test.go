package scope

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/ipc"
)

func TestTriggerFires(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		edge          Edge
		prev, v       float64
		hasPrev, want bool
	}{
		{Rising, 0, 1, true, true},
		{Rising, 0, 0.5, true, true}, // at the level counts
		{Rising, 0.5, 1, true, false},
		{Rising, 1, 0, true, false},
		{Rising, 0, 1, false, false}, // no edge at the first sample
		{Falling, 1, 0, true, true},
		{Falling, 1, 0.5, true, true},
		{Falling, 0.5, 0, true, false},
		{Falling, 0, 1, true, false},
		{High, 1, 1, true, true},
		{High, 0, 0.4, false, false},
		{High, 0, 0.5, false, true},
		{Low, 0, 0.5, false, true},
		{Low, 0, 0.6, true, false},
		{Auto, 0, 0, false, true},
		{Rising, math.NaN(), 1, true, false},
	} {
		tr := Trigger{Edge: tc.edge, Level: 0.5}
		assert.Equal(t, tc.want, tr.fires(tc.prev, tc.v, tc.hasPrev), "%s %v->%v (prev %v)", tc.edge, tc.prev, tc.v, tc.hasPrev)
	}
	for _, n := range edgeNames {
		e, err := ParseEdge(strings.ToUpper(n))
		require.NoError(t, err)
		assert.Equal(t, n, e.String())
	}
	_, err := ParseEdge("up")
	assert.Error(t, err)
}

func feed(c *Capture, from, to int, value func(i int) float64) (done bool, at int) {
	for i := from; i < to; i++ {
		s := sampler.Sample{Cycle: uint64(i), Time: int64(i) * 1000, Values: []uint64{math.Float64bits(value(i)), uint64(i % 2)}}
		if c.Add(s) {
			return true, i
		}
	}
	return false, to
}

// A capture keeps the Pre samples before the trigger, in order, then the
// trigger sample and the rest.
func TestCapturePreTriggerWindow(t *testing.T) {
	t.Parallel()
	types := []hal.Type{hal.TypeFloat, hal.TypeBit}
	c := NewCapture(Trigger{Pin: 0, Edge: Rising, Level: 100}, 7, 20, types)
	done, at := feed(c, 0, 1000, func(i int) float64 { return float64(i) })
	require.True(t, done)
	assert.Equal(t, 112, at, "fires at 100, ends 12 samples later")
	require.Len(t, c.Rows, 20)
	assert.Equal(t, 7, c.Fired)
	for i, r := range c.Rows {
		assert.EqualValues(t, 93+i, r.Cycle)
	}
	assert.Zero(t, c.Gaps())

	// an edge before Pre samples are in does not fire: the trigger is
	// armed once they are, as LinuxCNC's scope_rt.c goes from PRE_TRIG
	// to TRIG_WAIT; the next edge fires with the whole window before it
	square := func(i int) float64 { return float64(i % 10 / 5) } // rises at 5, 15, ...
	c = NewCapture(Trigger{Pin: 0, Edge: Rising, Level: 0.5}, 7, 20, types)
	done, _ = feed(c, 0, 1000, square)
	require.True(t, done)
	assert.Equal(t, 7, c.Fired)
	assert.EqualValues(t, 15, c.Rows[c.Fired].Cycle)
	assert.EqualValues(t, 8, c.Rows[0].Cycle)

	// on a bit, falling; no pre-trigger window
	c = NewCapture(Trigger{Pin: 1, Edge: Falling, Level: 0.5}, 0, 3, types)
	done, _ = feed(c, 5, 1000, func(i int) float64 { return 0 })
	require.True(t, done)
	assert.EqualValues(t, []uint64{6, 7, 8}, []uint64{c.Rows[0].Cycle, c.Rows[1].Cycle, c.Rows[2].Cycle})

	// the gaps between rows are counted
	c = NewCapture(Trigger{Edge: Auto}, 0, 3, types)
	c.Add(sampler.Sample{Cycle: 1, Values: []uint64{0, 0}})
	c.Add(sampler.Sample{Cycle: 5, Values: []uint64{0, 0}})
	c.Add(sampler.Sample{Cycle: 6, Values: []uint64{0, 0}})
	assert.EqualValues(t, 3, c.Gaps())
}

func TestWriteCSV(t *testing.T) {
	t.Parallel()
	types := []hal.Type{hal.TypeFloat, hal.TypeBit, hal.TypeS32}
	c := NewCapture(Trigger{Pin: 1, Edge: Rising, Level: 0.5}, 1, 3, types)
	for i := range 10 {
		c.Add(sampler.Sample{Cycle: uint64(i), Time: int64(i) * 50_000, Values: []uint64{math.Float64bits(float64(i) / 4), uint64(i / 3), uint64(int64(-i))}})
	}
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, c, []string{"pos", `a,"b"`, "n"}))
	assert.Equal(t, `cycle,time_s,pos,"a,""b""",n
2,-5e-05,0.5,0,-2
3,0,0.75,1,-3
4,5e-05,1,1,-4
`, b.String())
}

// staleRing is a staleSource: buffered samples, then more that arrive.
type staleRing struct {
	buffered int
	samples  []sampler.Sample
}

func (r *staleRing) Buffered() (int, error) { return r.buffered, nil }

func (r *staleRing) TryNext() (sampler.Sample, error) {
	if len(r.samples) == 0 {
		return sampler.Sample{}, ipc.ErrEmpty
	}
	s := r.samples[0]
	r.samples = r.samples[1:]
	return s, nil
}

// SkipStale drops the samples buffered when it starts, no more (a fast
// thread cannot keep it draining), and Add then ignores their cycles.
func TestSkipStaleDropsOnlyTheBuffered(t *testing.T) {
	t.Parallel()
	types := []hal.Type{hal.TypeBit}
	var all []sampler.Sample
	for i := range 10 {
		all = append(all, sampler.Sample{Cycle: uint64(100 + i), Values: []uint64{1}})
	}
	c := NewCapture(Trigger{Edge: High, Level: 0.5}, 0, 2, types)
	rd := &staleRing{buffered: 4, samples: all}
	n, first, last, err := c.SkipStale(rd)
	require.NoError(t, err)
	assert.Equal(t, []uint64{4, 100, 103}, []uint64{uint64(n), first, last})
	assert.EqualValues(t, 104, c.From)
	assert.Len(t, rd.samples, 6, "the samples that came after are fresh")
	assert.False(t, c.Add(all[2]), "a stale sample read late is ignored")
	assert.Equal(t, -1, c.Fired)
	assert.False(t, c.Add(all[4]))
	assert.True(t, c.Add(all[5]))
	assert.EqualValues(t, 104, c.Rows[c.Fired].Cycle)

	// fewer than Buffered said (another reader took some): no error
	c = NewCapture(Trigger{Edge: High, Level: 0.5}, 0, 2, types)
	n, _, _, err = c.SkipStale(&staleRing{buffered: 20, samples: all[:3]})
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	// nothing buffered: nothing skipped
	c = NewCapture(Trigger{Edge: High, Level: 0.5}, 0, 2, types)
	n, _, _, err = c.SkipStale(&staleRing{})
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Zero(t, c.From)
}

// A capture waiting for its trigger with the pre-trigger window full
// takes a sample without allocating (halweb's scope feeds it every
// sample of a fast thread); the rows keep their own values. Before, each
// sample allocated its values.
func TestAddWaitingDoesNotAllocate(t *testing.T) {
	c := NewCapture(Trigger{Pin: 0, Edge: Rising, Level: 10}, 4, 8, []hal.Type{hal.TypeFloat, hal.TypeBit})
	vals := []uint64{math.Float64bits(0), 0}
	i := 0
	add := func() {
		vals[0], vals[1] = math.Float64bits(float64(i%3)), uint64(i%2)
		c.Add(sampler.Sample{Cycle: uint64(i), Values: vals})
		i++
	}
	for range 4 {
		add()
	}
	assert.Zero(t, testing.AllocsPerRun(100, add))
	done, _ := feed(c, i, i+100, func(j int) float64 {
		if j >= i+10 {
			return 20
		}
		return float64(j % 3)
	})
	require.True(t, done)
	require.Len(t, c.Rows, 8)
	for k, r := range c.Rows {
		assert.Equal(t, uint64(i+6+k), r.Cycle)
		assert.Equal(t, uint64(r.Cycle%2), r.Values[1], "row %d keeps its own values", k)
		want := 20.0
		if k < 4 {
			want = float64(r.Cycle % 3)
		}
		assert.Equal(t, want, math.Float64frombits(r.Values[0]), "row %d", k)
	}
}
