package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"math"
	"strings"
	"sync"
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
	"github.com/gortapi/gortapi/rtapi/sim"
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

// signalWriter is a goroutine-safe stderr that closes seen at the first
// write containing want.
type signalWriter struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want string
	seen chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.seen != nil && strings.Contains(w.b.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// halscope arms on fresh samples only (issue 36 item 6: it triggered on
// the sample of cycle 48,000 buffered while the thread was at 307,000,
// with no warning). A ring pre-filled with samples holding a rising edge
// is skipped, and says so; the capture fires on the first fresh edge.
func TestRunArmsOnFreshSamplesOnly(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	dir := t.TempDir()
	h, err := hal.New(rt, hal.Options{ShmDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	cmds, err := halfile.Parse("stale.hal", strings.NewReader(`
loadrt threads name1=servo period1=1000000
loadrt sampler cfg=bf depth=100
addf sampler.0 servo
start
`))
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	clock, err := sim.New(rt)
	require.NoError(t, err)
	th, ok := h.Thread("servo")
	require.True(t, ok)
	cycles := func(n int64) { require.NoError(t, clock.RunCycles(th.Task(), n)) }
	pin := func(v string) { require.NoError(t, h.SetP("sampler.0.pin.0", v)) }

	// stale: cycles 0 to 49, rising at 10
	cycles(10)
	pin("1")
	cycles(40)
	pin("0")

	var stdout bytes.Buffer
	stderr := &signalWriter{want: "stale", seen: make(chan struct{})}
	armed := stderr.seen
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), &stdout, stderr, config{trigger: 0, edge: "rising", level: 0.5, pre: 2, count: 5,
			csv: "-", instance: rt.Instance(), shmDir: dir})
	}()
	select {
	case <-armed:
	case err := <-done:
		t.Fatalf("halscope ended before arming, on the stale samples (%v):\n%s", err, stdout.String())
	case <-time.After(30 * time.Second):
		t.Fatal("halscope never armed")
	}
	assert.Contains(t, stderr.String(), "skipped 50 stale samples (cycles 0 to 49)")
	// fresh: cycles 50 to 54 low, rising at 55
	cycles(5)
	pin("1")
	cycles(10)
	require.NoError(t, <-done, stderr.String())
	records, err := csv.NewReader(&stdout).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 6, stdout.String())
	var got []string
	for _, r := range records[1:] {
		got = append(got, r[0]+":"+r[2])
	}
	assert.Equal(t, []string{"53:0", "54:0", "55:1", "56:1", "57:1"}, got, "cycle:pin.0, the trigger at 55")
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
