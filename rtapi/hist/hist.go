// Package hist is a fixed-bucket latency histogram with one writer and any
// number of concurrent readers, the shape cyclictest -h and LinuxCNC's
// latency-histogram print.
//
// One goroutine records, with atomic stores and no lock (Record is
// RT-safe); Snapshot and Fold run on any goroutine, never delay it, and
// return Count, Sum, Min, Max and buckets of the same samples. They read
// only the buckets up to the highest in use, so they cost what the samples
// cost, not the bound.
//
// Example (example_test.go): a task's histogram, read as a snapshot, its
// percentiles, and Sub for what happened since a mark.
package hist

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/errs"
)

// Histogram counts samples (nanoseconds) in buckets of equal width from 0
// up to a bound, plus an overflow count, and tracks count, sum, minimum and
// maximum exactly.
type Histogram struct {
	// seq is odd while Record updates the counters (a one-writer seqlock).
	seq     atomic.Uint64
	width   int64
	buckets []atomic.Uint64
	// top is the highest bucket that ever held a sample (0 when none).
	top      atomic.Int64
	overflow atomic.Uint64
	sum      atomic.Int64
	min      atomic.Int64
	max      atomic.Int64
}

// New returns a histogram of buckets width wide covering [0, bound).
// Samples at or past bound count as overflow, negative ones in bucket 0. It
// panics on what Validate refuses.
func New(width, bound time.Duration) *Histogram {
	if err := Validate(width, bound); err != nil {
		panic("hist.New: " + err.Error())
	}
	n := (int64(bound) + int64(width) - 1) / int64(width)
	// Untouched zero pages stay unmapped until samples land there.
	h := &Histogram{width: int64(width), buckets: make([]atomic.Uint64, n)}
	h.min.Store(math.MaxInt64)
	h.max.Store(math.MinInt64)
	return h
}

// MaxBuckets bounds the memory one histogram takes (8 bytes a bucket).
const MaxBuckets = 1 << 20

// Validate returns nil if New accepts width and bound, else an error
// matching rtapi.ErrInvalid.
func Validate(width, bound time.Duration) error {
	switch {
	case width <= 0:
		return fmt.Errorf("histogram bucket width %v must be positive: %w", width, errs.Invalid)
	case bound < width:
		return fmt.Errorf("histogram bound %v is below the bucket width %v: %w", bound, width, errs.Invalid)
	case int64(bound)/int64(width) > MaxBuckets:
		return fmt.Errorf("histogram bound %v over width %v needs more than %d buckets: %w", bound, width, MaxBuckets, errs.Invalid)
	}
	return nil
}

// Record adds one sample. Only one goroutine may call Record at a time.
// RT-safe.
func (h *Histogram) Record(d time.Duration) {
	ns := int64(d)
	seq := h.seq.Load()
	h.seq.Store(seq + 1)
	// Min and Max before the counts, which an unsynchronised reader
	// loads first: it never counts a sample outside [Min, Max].
	if ns < h.min.Load() {
		h.min.Store(ns)
	}
	if ns > h.max.Load() {
		h.max.Store(ns)
	}
	h.sum.Store(h.sum.Load() + ns)
	i := max(ns/h.width, 0)
	if i < int64(len(h.buckets)) {
		// top before the bucket, which readers load after top.
		if i > h.top.Load() {
			h.top.Store(i)
		}
		b := &h.buckets[i]
		b.Store(b.Load() + 1)
	} else {
		h.overflow.Store(h.overflow.Load() + 1)
	}
	h.seq.Store(seq + 2)
}

// Reset forgets every sample. It must not run concurrently with Record.
func (h *Histogram) Reset() {
	for i := range h.buckets[:h.top.Load()+1] {
		h.buckets[i].Store(0)
	}
	h.top.Store(0)
	h.overflow.Store(0)
	h.sum.Store(0)
	h.min.Store(math.MaxInt64)
	h.max.Store(math.MinInt64)
}

// Width is the bucket width.
func (h *Histogram) Width() time.Duration { return time.Duration(h.width) }

// Bound is the upper end of the last bucket.
func (h *Histogram) Bound() time.Duration { return time.Duration(h.width * int64(len(h.buckets))) }

// snapshotTries bounds Snapshot's copies that raced a Record.
const snapshotTries = 64

// Snapshot copies the histogram: the samples recorded before some instant.
// It allocates len(Counts) buckets and may run concurrently with Record.
// Against a writer faster than the copy, 64 times in a row, it settles for
// a copy that may miss the samples in flight, still within [Min, Max].
func (h *Histogram) Snapshot() Snapshot {
	s := Snapshot{Width: time.Duration(h.width), Counts: make([]uint64, len(h.buckets))}
	h.read(func() { h.copyTo(&s) }, &s.Count, &s.Sum, &s.Min, &s.Max)
	return s
}

// read calls copy until one call saw no Record in flight, or snapshotTries
// times and once more; then it clamps sum to count·[min, max] and zeros the
// sentinels of an empty histogram.
func (h *Histogram) read(copy func(), count *int64, sum, lo, hi *time.Duration) {
	for try := 0; ; try++ {
		seq := h.seq.Load()
		if try == snapshotTries || seq&1 == 0 {
			copy()
			if try == snapshotTries || h.seq.Load() == seq {
				break
			}
		}
		runtime.Gosched()
	}
	n := time.Duration(*count)
	if n == 0 {
		*lo, *hi, *sum = 0, 0, 0
		return
	}
	if *sum/n < *lo {
		*sum = *lo * n
	}
	if *sum/n > *hi {
		*sum = *hi * n
	}
}

// used returns the buckets up to top, the only ones that may hold samples.
// top only grows, so a retried copy overwrites every bucket an earlier wrote.
func (h *Histogram) used() []atomic.Uint64 {
	top := h.top.Load()
	if top < 0 || top >= int64(len(h.buckets)) {
		top = int64(len(h.buckets)) - 1
	}
	return h.buckets[:top+1]
}

// copyTo reads the counters into s in the reverse of Record's order.
func (h *Histogram) copyTo(s *Snapshot) {
	s.Overflow = h.overflow.Load()
	s.Count = int64(s.Overflow)
	for i := range h.used() {
		s.Counts[i] = h.buckets[i].Load()
		s.Count += int64(s.Counts[i])
	}
	s.Min = time.Duration(h.min.Load())
	s.Max = time.Duration(h.max.Load())
	s.Sum = time.Duration(h.sum.Load())
}

// Folded is a histogram folded into buckets of the caller's choosing,
// cumulative as Prometheus exports them.
type Folded struct {
	// Below[i] counts the samples in the buckets ending at or before
	// Upper[i], the overflow included once Upper[i] >= Max.
	Upper []time.Duration
	Below []uint64
	// Overflow, Count, Sum, Min and Max are those of Snapshot.
	Overflow uint64
	Count    int64
	Sum      time.Duration
	Min      time.Duration
	Max      time.Duration
}

// Fold returns the histogram folded at upper, in ascending order. It
// allocates only the result and is consistent as Snapshot is.
func (h *Histogram) Fold(upper []time.Duration) Folded {
	f := Folded{Upper: upper, Below: make([]uint64, len(upper))}
	h.read(func() { h.foldTo(&f) }, &f.Count, &f.Sum, &f.Min, &f.Max)
	return f
}

// foldTo folds the counters into f in copyTo's order.
func (h *Histogram) foldTo(f *Folded) {
	f.Overflow = h.overflow.Load()
	f.Count = int64(f.Overflow)
	var run uint64
	b := 0
	for i := range h.used() {
		end := time.Duration(int64(i+1) * h.width) // bucket i holds [i·w, (i+1)·w)
		for b < len(f.Upper) && end > f.Upper[b] {
			f.Below[b] = run
			b++
		}
		run += h.buckets[i].Load()
	}
	for ; b < len(f.Upper); b++ {
		f.Below[b] = run
	}
	f.Count += int64(run)
	f.Min = time.Duration(h.min.Load())
	f.Max = time.Duration(h.max.Load())
	f.Sum = time.Duration(h.sum.Load())
	if f.Overflow > 0 {
		for i := len(f.Upper) - 1; i >= 0 && f.Upper[i] >= f.Max; i-- {
			f.Below[i] = uint64(f.Count)
		}
	}
}

// Snapshot is a copy of a Histogram, a plain value to keep, merge and
// marshal; no method is safe concurrently with a Merge into it.
type Snapshot struct {
	// Counts[i] counts the samples in [i*Width, (i+1)*Width), Overflow
	// those at or past Bound.
	Width    time.Duration `json:"bucket_width_ns"`
	Counts   []uint64      `json:"counts"`
	Overflow uint64        `json:"overflow"`
	// Count, Sum, Min and Max are exact over every sample; zero without.
	Count int64         `json:"count"`
	Sum   time.Duration `json:"sum_ns"`
	Min   time.Duration `json:"min_ns"`
	Max   time.Duration `json:"max_ns"`
}

// Mean is the average sample, 0 without samples.
func (s Snapshot) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Sum / time.Duration(s.Count)
}

// Quantile returns the value below which a fraction q in (0, 1] of the
// samples lie (0.99 for p99): the upper edge of its bucket, capped at Max;
// Max when it falls in the overflow, 0 without samples. Another q, such as 99 or NaN, is an
// error matching rtapi.ErrInvalid, the only case that allocates.
func (s Snapshot) Quantile(q float64) (time.Duration, error) {
	if !(q > 0 && q <= 1) {
		return 0, fmt.Errorf("histogram quantile %v: want a fraction in (0, 1], e.g. 0.99 for p99: %w", q, errs.Invalid)
	}
	return s.quantile(q), nil
}

// Percentile is Quantile with p clamped to 0..1, so Percentile(99) is the
// maximum.
//
// Deprecated: use Quantile, which refuses a p outside (0, 1].
func (s Snapshot) Percentile(p float64) time.Duration {
	return s.quantile(min(max(p, 0), 1))
}

func (s Snapshot) quantile(p float64) time.Duration {
	if s.Count == 0 {
		return 0
	}
	rank := max(uint64(math.Ceil(p*float64(s.Count))), 1)
	var seen uint64
	for i, c := range s.Counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(i+1)*s.Width, s.Max)
		}
	}
	return s.Max
}

// Merge adds o's samples to s, growing s to o's buckets. Different widths
// are an error matching rtapi.ErrInvalid; a zero Snapshot takes o's width.
func (s *Snapshot) Merge(o Snapshot) error {
	if s.Width == 0 && len(s.Counts) == 0 {
		s.Width = o.Width
	}
	if o.Width != s.Width {
		return fmt.Errorf("merge histograms of bucket width %v and %v: %w", s.Width, o.Width, errs.Invalid)
	}
	if o.Count == 0 {
		return nil
	}
	if len(o.Counts) > len(s.Counts) {
		s.Counts = append(s.Counts, make([]uint64, len(o.Counts)-len(s.Counts))...)
	}
	for i, c := range o.Counts {
		s.Counts[i] += c
	}
	if s.Count == 0 {
		s.Min, s.Max = o.Min, o.Max
	} else {
		s.Min, s.Max = min(s.Min, o.Min), max(s.Max, o.Max)
	}
	s.Overflow += o.Overflow
	s.Count += o.Count
	s.Sum += o.Sum
	return nil
}

// Sub returns the samples s holds beyond earlier, an earlier snapshot of
// the same histogram: statistics since a mark. Counts, Overflow, Count and
// Sum are exact; Min and Max are exact when a new extreme came after
// earlier, else the edges of the lowest and highest bucket that gained (the
// all-time Min when bucket 0 gained below 0, the earlier Max when only the
// overflow gained). An empty window is zeros. A different width, or samples
// in earlier that s lacks (across a Reset), is an error matching
// rtapi.ErrInvalid.
func (s Snapshot) Sub(earlier Snapshot) (Snapshot, error) {
	if earlier.Count == 0 {
		return s.clone(), nil
	}
	if earlier.Width != s.Width || len(earlier.Counts) > len(s.Counts) ||
		earlier.Count > s.Count || earlier.Overflow > s.Overflow {
		return Snapshot{}, fmt.Errorf("hist: Sub of a snapshot that is not an earlier one of the same histogram "+
			"(width %v and %v, count %d and %d): %w", s.Width, earlier.Width, s.Count, earlier.Count, errs.Invalid)
	}
	d := Snapshot{Width: s.Width, Counts: make([]uint64, len(s.Counts)), Overflow: s.Overflow - earlier.Overflow,
		Count: s.Count - earlier.Count, Sum: s.Sum - earlier.Sum}
	lo, hi := -1, -1
	for i, c := range s.Counts {
		if i < len(earlier.Counts) {
			if earlier.Counts[i] > c {
				return Snapshot{}, fmt.Errorf("hist: Sub of a snapshot that is not an earlier one of the same histogram "+
					"(bucket %d: %d samples, earlier %d): %w", i, c, earlier.Counts[i], errs.Invalid)
			}
			c -= earlier.Counts[i]
		}
		d.Counts[i] = c
		if c > 0 {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
	}
	switch {
	case d.Count == 0:
		d.Sum = 0
	case s.Min < earlier.Min:
		d.Min = s.Min
	case lo == 0 && s.Min < 0:
		// Bucket 0 holds negative samples too: only the all-time Min is known.
		d.Min = s.Min
	case lo >= 0:
		d.Min = time.Duration(lo) * s.Width
	default:
		d.Min = s.Bound()
	}
	switch {
	case d.Count == 0:
	case s.Max > earlier.Max:
		d.Max = s.Max
	case d.Overflow > 0:
		d.Max = earlier.Max
	default:
		d.Max = time.Duration(hi+1) * s.Width
	}
	return d, nil
}

// Bound is the upper end of the last bucket.
func (s Snapshot) Bound() time.Duration { return time.Duration(len(s.Counts)) * s.Width }

// clone copies s with its own Counts.
func (s Snapshot) clone() Snapshot {
	s.Counts = append([]uint64(nil), s.Counts...)
	return s
}
