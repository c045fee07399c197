package sim

import (
	"errors"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
)

func TestSimRegisteredAndSelectable(t *testing.T) {
	t.Parallel()
	d, err := backend.Lookup(backend.SimName)
	require.NoError(t, err)
	require.Equal(t, backend.SimName, d.Name)
	ch, err := backend.Select(backend.SimName, backend.Config{Kernel: &kerneldetect.Report{}})
	require.NoError(t, err)
	s, ok := ch.Flavor.(*engine)
	require.True(t, ok)
	defer s.Close()
	require.Contains(t, ch.Why, "virtual clock")
	require.Equal(t, backend.Traits{VirtualClock: true}, s.Traits(), "a virtual clock and virtual threads")
	require.Equal(t, backend.SimName, s.Name())
	require.False(t, s.RealTime())
	lo, hi := s.Priorities()
	require.Equal(t, [2]int{1, 98}, [2]int{lo, hi})
	require.Equal(t, 10*time.Microsecond, s.MinPeriod())
	require.Zero(t, s.Now())
}

// A virtual thread driven by hand, as rtapi drives it: bind, begin, then
// end-cycle and wait for each release.
func TestSimThreadByHand(t *testing.T) {
	t.Parallel()
	s := newEngine(rtapi.SimOptions{Seed: 3})
	defer s.Close()
	require.NoError(t, s.SetTask("hand", TaskConfig{Jitter: ConstantJitter(7 * time.Microsecond), Cost: time.Microsecond}))
	type step struct{ end, now, late int64 }
	got := make(chan []step, 1)
	ready := make(chan error, 1)
	go func() {
		w, b, err := s.Bind(backend.ThreadSpec{Name: "hand", Priority: 50, Period: int64(time.Millisecond)})
		if err == nil && b.Wake != backend.WakeNanosleep {
			err = errors.New("wake mode " + b.Wake.String())
		}
		ready <- err
		if err != nil {
			return
		}
		deadline := w.Now()
		_ = w.Arm(deadline+int64(time.Millisecond), int64(time.Millisecond))
		w.Begin()
		var steps []step
		for range 3 {
			end := w.EndCycle()
			deadline += int64(time.Millisecond)
			now, n, err := w.Wait(deadline)
			if err != nil || n != 1 || w.Now() != now {
				now = -1
			}
			steps = append(steps, step{end, now, now - deadline})
		}
		w.EndCycle()
		w.Close()
		got <- steps
	}()
	require.NoError(t, <-ready)
	ok, err := s.Run(int64(10*time.Millisecond), nil, "", 0)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, []step{{1000, 1_007_000, 7000}, {1_008_000, 2_007_000, 7000}, {2_008_000, 3_007_000, 7000}}, <-got)
	require.EqualValues(t, 10*time.Millisecond, s.Now())
	tr, err := s.Trace()
	require.NoError(t, err)
	require.Equal(t, Event{Task: "hand", Kind: Exit, Cycle: 4, Time: 3_008_000}, tr.Events[len(tr.Events)-1])
}

func TestSimRunMisuse(t *testing.T) {
	t.Parallel()
	s := newEngine(rtapi.SimOptions{})
	_, err := s.Run(-1, nil, "", 0)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	_, err = s.Run(0, nil, "nobody", 1)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	_, _, err = s.Bind(backend.ThreadSpec{Name: "x", Wake: backend.WakeMode(9)})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "twice")
	_, err = s.Run(1, nil, "", 0)
	require.ErrorIs(t, err, os.ErrClosed)
	_, _, err = s.Bind(backend.ThreadSpec{Name: "late"})
	require.ErrorIs(t, err, os.ErrClosed)
	require.ErrorIs(t, s.SetTask("x", TaskConfig{}), os.ErrClosed)
}

func draw(j Jitter, seed uint64, n int) []int64 {
	var src jitterSource
	src.seed(seed, 99)
	src.set(j)
	out := make([]int64, n)
	for i := range out {
		out[i] = src.sample()
	}
	return out
}

func TestJitterDistributions(t *testing.T) {
	t.Parallel()
	const n = 20000
	mean := func(xs []int64) float64 {
		var s float64
		for _, x := range xs {
			s += float64(x)
		}
		return s / float64(len(xs))
	}
	require.Equal(t, make([]int64, 5), draw(Jitter{}, 1, 5), "the zero value adds nothing")
	require.Equal(t, []int64{5000, 5000}, draw(ConstantJitter(5*time.Microsecond), 1, 2))

	u := draw(UniformJitter(10*time.Microsecond, 20*time.Microsecond), 1, n)
	for _, x := range u {
		require.True(t, x >= 10000 && x < 20000, "%d", x)
	}
	require.InDelta(t, 15000, mean(u), 200)

	nm := draw(NormalJitter(50*time.Microsecond, 5*time.Microsecond), 1, n)
	require.InDelta(t, 50000, mean(nm), 200)
	for _, x := range draw(NormalJitter(0, 5*time.Microsecond), 1, n) {
		require.GreaterOrEqual(t, x, int64(0), "cut off at 0: never early")
	}
	require.InDelta(t, 30000, mean(draw(ExponentialJitter(30*time.Microsecond), 1, n)), 1500)

	require.Equal(t, draw(NormalJitter(time.Microsecond, time.Microsecond), 7, 100),
		draw(NormalJitter(time.Microsecond, time.Microsecond), 7, 100), "same seed, same draws")
	require.NotEqual(t, draw(NormalJitter(time.Microsecond, time.Microsecond), 7, 100),
		draw(NormalJitter(time.Microsecond, time.Microsecond), 8, 100))
}

func TestHistogramJitterReplaysBuckets(t *testing.T) {
	t.Parallel()
	h := hist.New(time.Microsecond, 100*time.Microsecond)
	for range 900 {
		h.Record(3500) // bucket 3
	}
	for range 100 {
		h.Record(time.Duration(time.Millisecond)) // overflow
	}
	snap := h.Snapshot()
	xs := draw(HistogramJitter(snap), 1, 10000)
	var over int
	for _, x := range xs {
		switch {
		case x == int64(time.Millisecond):
			over++
		case x >= 3500 && x < 4000:
		default:
			t.Fatalf("draw %d outside the recorded buckets", x)
		}
	}
	require.InDelta(t, 1000, over, 150, "the overflow share is kept")
	require.Contains(t, HistogramJitter(snap).String(), "1000 samples")
	require.ErrorIs(t, HistogramJitter(hist.Snapshot{Width: time.Microsecond}).validate(), rtapi.ErrInvalid)
	require.ErrorIs(t, HistogramJitter(hist.Snapshot{}).validate(), rtapi.ErrInvalid)
}

func TestJitterSamplingAllocatesNothing(t *testing.T) {
	h := hist.New(time.Microsecond, time.Millisecond)
	h.Record(1000)
	for _, j := range []Jitter{{}, ConstantJitter(1), UniformJitter(0, 10), NormalJitter(5, 1),
		ExponentialJitter(5), HistogramJitter(h.Snapshot())} {
		var src jitterSource
		src.seed(1, 2)
		src.set(j)
		require.Zero(t, testing.AllocsPerRun(100, func() { src.sample() }), "%v", j)
	}
}

func TestJitterValidation(t *testing.T) {
	t.Parallel()
	for _, j := range []Jitter{ConstantJitter(-1), UniformJitter(-1, 0), UniformJitter(5, 4),
		NormalJitter(-1, 0), NormalJitter(0, -1), ExponentialJitter(-1)} {
		require.ErrorIs(t, j.validate(), rtapi.ErrInvalid, "%v", j)
	}
	require.Equal(t, "none", Jitter{}.String())
	require.Equal(t, "uniform [0s, 1µs)", UniformJitter(0, time.Microsecond).String())
	require.False(t, math.IsNaN(float64(draw(NormalJitter(0, 0), 1, 1)[0])))
}

func TestSimEventKindString(t *testing.T) {
	t.Parallel()
	require.Equal(t, "clock-step", ClockStep.String())
	require.Equal(t, "event(0)", EventKind(0).String())
	require.Equal(t, "event(42)", EventKind(42).String())
}

// The registered Open takes rtapi.SimOptions from backend.Config.Sim, the
// zero options when there are none, and refuses anything else.
func TestOpenTakesSimOptions(t *testing.T) {
	t.Parallel()
	k := &kerneldetect.Report{}
	ch, err := backend.Select(backend.SimName, backend.Config{Kernel: k, Sim: rtapi.SimOptions{Seed: 9, TraceLimit: 3, SharedCPU: true}})
	require.NoError(t, err)
	s := ch.Flavor.(*engine)
	require.Equal(t, [3]any{uint64(9), 3, true}, [3]any{s.seed, s.limit, s.shared})
	require.Len(t, s.ring, 4, "a power of two")
	require.NoError(t, s.Close())
	ch, err = backend.Select(backend.SimName, backend.Config{Kernel: k})
	require.NoError(t, err)
	s = ch.Flavor.(*engine)
	require.Equal(t, [2]any{defaultHangTimeout, defaultTraceLimit}, [2]any{s.hang, s.limit})
	require.NoError(t, s.Close())
	_, err = backend.Select(backend.SimName, backend.Config{Kernel: k, Sim: &rtapi.SimOptions{}})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	_, err = backend.Select(backend.SimName, backend.Config{Kernel: k, Sim: rtapi.SimOptions{HangTimeout: -1}})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
}

// A paused task woken by an earlier Resume's leftover kick reads its
// control word, still paused, and says so again (Suspend). That must not
// end the wait of a Resume made meanwhile: Resume returns only once the
// task is back among the threads to schedule, so that it rejoins at a
// virtual time that does not depend on goroutine timing (recorded
// scenario 134 diverged so in the 386 guest).
func TestResumeWaitsForTheTaskToRejoin(t *testing.T) {
	t.Parallel()
	s := newEngine(rtapi.SimOptions{})
	_, _, err := s.Bind(backend.ThreadSpec{Name: "paused", Priority: 1, Period: int64(time.Millisecond)})
	require.NoError(t, err)
	th := s.threads[0]
	// Paused and off the schedule, as Suspend with the turn leaves it.
	th.offClock = true
	s.mu.Lock()
	th.suspended = true
	s.mu.Unlock()

	resumed := make(chan struct{})
	go func() { th.Kick(false); close(resumed) }()
	require.NoError(t, th.Suspend()) // "still paused", from a read made before the Resume
	select {
	case <-resumed:
		t.Fatal("Resume returned before the task was back in the schedule")
	default:
	}
	// The task reads the Resume's kick and rejoins; then Resume returns.
	go th.Wait(th.local + int64(time.Millisecond))
	<-resumed
	require.Contains(t, s.joins, th)
	require.NoError(t, s.Close())
}
