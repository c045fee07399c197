package hist

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/errs"
)

func TestRecordAndPercentiles(t *testing.T) {
	t.Parallel()
	h := New(time.Microsecond, 100*time.Microsecond)
	for i := int64(0); i < 100; i++ {
		h.Record(time.Duration(i*1000 + 500)) // one sample in each bucket
	}
	h.Record(250_000) // overflow
	s := h.Snapshot()
	require.EqualValues(t, 101, s.Count)
	require.EqualValues(t, 1, s.Overflow)
	require.EqualValues(t, 500, s.Min)
	require.EqualValues(t, 250_000, s.Max)
	require.Equal(t, 51*time.Microsecond, quantile(t, s, 0.5)) // rank 51 of 101
	require.Equal(t, time.Microsecond, quantile(t, s, 0.001))
	require.Equal(t, 250*time.Microsecond, quantile(t, s, 1))
	require.Equal(t, 100*time.Microsecond, quantile(t, s, 0.99))
}

func quantile(t *testing.T, s Snapshot, q float64) time.Duration {
	t.Helper()
	d, err := s.Quantile(q)
	require.NoError(t, err)
	return d
}

// Quantile takes a fraction in (0, 1] and refuses anything else: 99 is a
// percent given where a fraction is due, not the maximum.
func TestQuantileRefusesOutOfRange(t *testing.T) {
	h := New(time.Microsecond, 100*time.Microsecond)
	h.Record(10 * time.Microsecond)
	h.Record(90 * time.Microsecond)
	s := h.Snapshot()
	for _, q := range []float64{99, 0, -0.5, 1.0000001, math.NaN(), math.Inf(1)} {
		d, err := s.Quantile(q)
		require.ErrorIs(t, err, errs.Invalid, "q %v", q)
		require.Zero(t, d)
	}
	require.Equal(t, 90*time.Microsecond, quantile(t, s, 1))
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = s.Quantile(0.99) }))
	// The deprecated Percentile keeps clamping.
	require.Equal(t, 90*time.Microsecond, s.Percentile(99))
}

func TestEmptyAndNegative(t *testing.T) {
	t.Parallel()
	h := New(time.Microsecond, 10*time.Microsecond)
	s := h.Snapshot()
	require.Zero(t, quantile(t, s, 0.5))
	require.Zero(t, s.Mean())
	require.Zero(t, s.Min)
	h.Record(-3000)
	s = h.Snapshot()
	require.EqualValues(t, 1, s.Counts[0])
	require.EqualValues(t, -3000, s.Min)
	h.Reset()
	require.Zero(t, h.Snapshot().Count)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.Error(t, Validate(0, time.Second))
	require.Error(t, Validate(time.Microsecond, 0))
	require.Error(t, Validate(time.Nanosecond, time.Hour))
	require.NoError(t, Validate(time.Microsecond, time.Millisecond))
	require.Panics(t, func() { New(0, 0) })
	h := New(time.Microsecond, 1500*time.Nanosecond) // rounds up to 2 buckets
	require.Equal(t, 2*time.Microsecond, h.Bound())
	require.Equal(t, time.Microsecond, h.Width())
}

func TestMerge(t *testing.T) {
	t.Parallel()
	a, b := New(time.Microsecond, 5*time.Microsecond), New(time.Microsecond, 10*time.Microsecond)
	a.Record(1500)
	b.Record(8500)
	b.Record(500)
	var s Snapshot
	require.NoError(t, s.Merge(a.Snapshot()))
	require.NoError(t, s.Merge(b.Snapshot()))
	require.EqualValues(t, 3, s.Count)
	require.EqualValues(t, 500, s.Min)
	require.EqualValues(t, 8500, s.Max)
	require.Len(t, s.Counts, 10)
	require.Error(t, s.Merge(New(2*time.Microsecond, 4*time.Microsecond).Snapshot()))
}

func TestRecordAllocs(t *testing.T) {
	h := New(time.Microsecond, time.Millisecond)
	require.Zero(t, testing.AllocsPerRun(1000, func() { h.Record(1234) }))
}

// One writer, concurrent readers: run with -race.
func TestConcurrentSnapshot(t *testing.T) {
	t.Parallel()
	h := New(time.Microsecond, time.Millisecond)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_, _ = h.Snapshot().Quantile(0.99)
			}
		}
	}()
	for i := 0; i < 100000; i++ {
		h.Record(time.Duration(i % 2000 * 1000))
	}
	close(stop)
	wg.Wait()
	require.EqualValues(t, 100000, h.Snapshot().Count)
}

func BenchmarkRecord(b *testing.B) {
	h := New(time.Microsecond, time.Millisecond)
	for i := 0; i < b.N; i++ {
		h.Record(time.Duration(i & 0xfffff))
	}
}

// A snapshot racing the writer is self-consistent: every sample it counts
// lies within its Min and Max, and its Sum is the sum of the samples it
// counts. The first sample is the sharpest case: a snapshot that counts it
// must not still hold the empty histogram's sentinels.
func TestSnapshotRacingTheFirstSample(t *testing.T) {
	t.Parallel()
	const sample = 4321
	n := 3000
	if testing.Short() {
		n = 300 // each round waits for a goroutine to be scheduled
	}
	for i := 0; i < n; i++ {
		h := New(time.Microsecond, time.Millisecond)
		start := make(chan struct{})
		done := make(chan struct{})
		go func() {
			<-start
			h.Record(sample)
			close(done)
		}()
		close(start)
		for {
			s := h.Snapshot()
			if s.Count > 0 {
				require.EqualValues(t, 1, s.Count)
				require.EqualValues(t, sample, s.Min, "snapshot %d", i)
				require.EqualValues(t, sample, s.Max, "snapshot %d", i)
				require.EqualValues(t, sample, s.Sum, "snapshot %d", i)
				require.Equal(t, time.Duration(sample), quantile(t, s, 1))
				break
			}
			select {
			case <-done:
			default:
				continue
			}
		}
		<-done
	}
}

// Under a fast writer, snapshots stay consistent: Count matches the
// buckets, Mean lies within [Min, Max].
func TestSnapshotConsistentUnderLoad(t *testing.T) {
	t.Parallel()
	h := New(time.Microsecond, time.Millisecond)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				h.Record(time.Duration(1000 + i%3000*100))
			}
		}
	}()
	n := 2000
	if testing.Short() {
		n = 200
	}
	for i := 0; i < n; i++ {
		s := h.Snapshot()
		if s.Count == 0 {
			continue
		}
		var n int64
		for _, c := range s.Counts {
			n += int64(c)
		}
		require.Equal(t, s.Count, n+int64(s.Overflow))
		require.LessOrEqual(t, s.Min, s.Max)
		require.GreaterOrEqual(t, int64(s.Mean()), s.Min)
		require.LessOrEqual(t, int64(s.Mean()), s.Max)
	}
	close(stop)
	wg.Wait()
}

// Sub gives the samples recorded since a mark: exact counts and sum,
// exact extremes when the window set a new one, bucket edges otherwise.
func TestSubSinceAMark(t *testing.T) {
	t.Parallel()
	us := time.Microsecond
	h := New(us, 100*us)
	for _, d := range []time.Duration{3 * us, 50 * us, 90 * us} {
		h.Record(d)
	}
	mark := h.Snapshot()

	d, err := h.Snapshot().Sub(mark)
	require.NoError(t, err)
	require.Zero(t, d.Count)
	require.Zero(t, d.Min)
	require.Zero(t, d.Max)
	require.Zero(t, d.Sum)

	h.Record(10*us + 400)
	h.Record(20*us + 100)
	d, err = h.Snapshot().Sub(mark)
	require.NoError(t, err)
	require.EqualValues(t, 2, d.Count)
	require.Equal(t, 30*us+500, d.Sum)
	require.Equal(t, 10*us, d.Min, "no new minimum: the edge of the lowest bucket that gained")
	require.Equal(t, 21*us, d.Max, "no new maximum: the edge of the highest bucket that gained")
	require.Equal(t, 15*us+250, d.Mean())

	h.Record(us + 7)   // a new minimum
	h.Record(250 * us) // a new maximum, in the overflow
	d, err = h.Snapshot().Sub(mark)
	require.NoError(t, err)
	require.EqualValues(t, 4, d.Count)
	require.EqualValues(t, 1, d.Overflow)
	require.Equal(t, us+7, d.Min)
	require.Equal(t, 250*us, d.Max)
	require.Equal(t, h.Snapshot().Count-mark.Count, d.Count)

	// The mark itself, and a mark of nothing, give everything since.
	all, err := h.Snapshot().Sub(Snapshot{})
	require.NoError(t, err)
	require.Equal(t, h.Snapshot(), all)
}

// Sub refuses what is not an earlier snapshot of the same histogram.
func TestSubMisuse(t *testing.T) {
	t.Parallel()
	us := time.Microsecond
	a, b := New(us, 10*us), New(2*us, 10*us)
	a.Record(us)
	b.Record(us)
	_, err := a.Snapshot().Sub(b.Snapshot())
	require.Error(t, err, "other width")
	later := a.Snapshot()
	a.Reset()
	_, err = a.Snapshot().Sub(later)
	require.Error(t, err, "across a Reset")
	c := New(us, 10*us)
	c.Record(5 * us)
	c.Record(5 * us)
	d := New(us, 10*us)
	d.Record(us)
	_, err = c.Snapshot().Sub(d.Snapshot())
	require.Error(t, err, "a bucket the later snapshot does not have")
}

// The first bucket also holds the negative samples (a wake-up measured
// before its release): a window whose lowest samples are there has a
// Min no higher than the earlier minimum allows, never above its own
// Mean (issue 21, defect 10: four samples of -5 µs gave Min 0, Mean -5 µs).
func TestSubMinCoversNegativeSamples(t *testing.T) {
	t.Parallel()
	h := New(time.Microsecond, 100*time.Microsecond)
	h.Record(-5 * time.Microsecond)
	mark := h.Snapshot()
	for range 4 {
		h.Record(-5 * time.Microsecond)
	}
	d, err := h.Snapshot().Sub(mark)
	require.NoError(t, err)
	require.EqualValues(t, 4, d.Count)
	require.Equal(t, -5*time.Microsecond, d.Mean())
	require.Equal(t, -5*time.Microsecond, d.Min)
	require.LessOrEqual(t, d.Min, d.Mean())
	require.GreaterOrEqual(t, d.Max, d.Mean())

	// Negative samples before the mark, positive ones in bucket 0 after:
	// Min may only say what is known, the all-time minimum at worst.
	h2 := New(time.Microsecond, 100*time.Microsecond)
	h2.Record(-7 * time.Microsecond)
	mark = h2.Snapshot()
	h2.Record(300 * time.Nanosecond)
	d, err = h2.Snapshot().Sub(mark)
	require.NoError(t, err)
	require.LessOrEqual(t, d.Min, 300*time.Nanosecond)
	require.GreaterOrEqual(t, d.Min, -7*time.Microsecond)
}

// TestFoldMatchesSnapshot folds at bounds that fall inside, between and
// past the buckets and checks each against a sum over Snapshot's counts;
// a bound at or past Max counts the overflow too (a Prometheus le bucket
// of 1 s holds a 250 µs sample past a 100 µs histogram), one below Max
// does not.
func TestFoldMatchesSnapshot(t *testing.T) {
	t.Parallel()
	h := New(time.Microsecond, 100*time.Microsecond)
	for _, ns := range []int64{-5, 0, 999, 1000, 1500, 2000, 49_999, 50_000, 99_999, 250_000} {
		h.Record(time.Duration(ns))
	}
	upper := []time.Duration{0, time.Microsecond, 1500, 2 * time.Microsecond, 50 * time.Microsecond,
		100 * time.Microsecond, 200 * time.Microsecond, 250 * time.Microsecond, time.Second}
	f, s := h.Fold(upper), h.Snapshot()
	for j, u := range upper {
		var want uint64
		for i, c := range s.Counts {
			if time.Duration(i+1)*s.Width <= u {
				want += c
			}
		}
		if u >= s.Max {
			want = uint64(s.Count)
		}
		require.Equal(t, want, f.Below[j], "below %v", u)
	}
	require.Equal(t, s.Count, f.Count)
	require.Equal(t, s.Overflow, f.Overflow)
	require.Equal(t, s.Sum, f.Sum)
	require.Equal(t, s.Min, f.Min)
	require.Equal(t, s.Max, f.Max)
	require.Zero(t, New(time.Microsecond, time.Millisecond).Fold(upper).Max)
}

// TestFoldCostsTheBucketsInUse: folding a histogram of a million buckets
// whose samples lie in its first few allocates only the result and reads
// only those buckets; a sample in the overflow does not widen the range.
// A fold that walked every bucket (what a scrape did) reads a million.
func TestFoldCostsTheBucketsInUse(t *testing.T) {
	h := New(time.Microsecond, time.Second)
	for i := 0; i < 1000; i++ {
		h.Record(time.Duration(i%50) * time.Microsecond)
	}
	h.Record(2 * time.Second)
	require.Len(t, h.used(), 50)
	upper := []time.Duration{time.Microsecond, time.Millisecond, time.Second}
	allocs := testing.AllocsPerRun(10, func() { h.Fold(upper) })
	require.LessOrEqual(t, allocs, 1.0)
	h.Reset()
	require.Len(t, h.used(), 1)
	require.Zero(t, h.Snapshot().Count)
}
