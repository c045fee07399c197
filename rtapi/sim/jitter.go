package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
)

type jitterKind uint8

const (
	jitterNone jitterKind = iota
	jitterConstant
	jitterUniform
	jitterNormal
	jitterExponential
	jitterHistogram
)

// Jitter is a distribution of wake-up lateness added to a task's releases
// (TaskConfig.Jitter); the zero value adds none. Draws come from the
// task's own seeded stream, so a seed reproduces them. SetTask refuses
// bad parameters (rtapi.ErrInvalid).
type Jitter struct {
	kind jitterKind
	a, b float64
	// histogram replay: cumulative counts, overflow last
	cum        []uint64
	width      int64
	lo, hi     int64
	err        error
	descriptor string
}

// ConstantJitter wakes every release exactly d late.
func ConstantJitter(d time.Duration) Jitter {
	j := Jitter{kind: jitterConstant, a: float64(d), descriptor: fmt.Sprintf("constant %v", d)}
	if d < 0 {
		j.err = fmt.Errorf("jitter: constant lateness %v is negative: %w", d, rtapi.ErrInvalid)
	}
	return j
}

// UniformJitter draws lateness uniformly from [lo, hi).
func UniformJitter(lo, hi time.Duration) Jitter {
	j := Jitter{kind: jitterUniform, a: float64(lo), b: float64(hi), descriptor: fmt.Sprintf("uniform [%v, %v)", lo, hi)}
	if lo < 0 || hi < lo {
		j.err = fmt.Errorf("jitter: uniform range [%v, %v) needs 0 <= lo <= hi: %w", lo, hi, rtapi.ErrInvalid)
	}
	return j
}

// NormalJitter draws lateness from a normal distribution, cut off at 0.
func NormalJitter(mean, stddev time.Duration) Jitter {
	j := Jitter{kind: jitterNormal, a: float64(mean), b: float64(stddev),
		descriptor: fmt.Sprintf("normal mean %v stddev %v", mean, stddev)}
	if mean < 0 || stddev < 0 {
		j.err = fmt.Errorf("jitter: normal mean %v, stddev %v must not be negative: %w", mean, stddev, rtapi.ErrInvalid)
	}
	return j
}

// ExponentialJitter draws exponential lateness with the given mean.
func ExponentialJitter(mean time.Duration) Jitter {
	j := Jitter{kind: jitterExponential, a: float64(mean), descriptor: fmt.Sprintf("exponential mean %v", mean)}
	if mean < 0 {
		j.err = fmt.Errorf("jitter: exponential mean %v is negative: %w", mean, rtapi.ErrInvalid)
	}
	return j
}

// HistogramJitter replays a latency histogram recorded on a real machine
// (a task's Stats().Latency, or rtapi/latencyfile's). Each draw picks a
// bucket by its share and a value uniformly inside it, within the
// recorded minimum and maximum; the overflow count draws the maximum.
func HistogramJitter(h hist.Snapshot) Jitter {
	j := Jitter{kind: jitterHistogram, width: int64(h.Width), lo: int64(max(h.Min, 0)), hi: int64(max(h.Max, 0)),
		descriptor: fmt.Sprintf("histogram of %d samples, max %v", h.Count, h.Max)}
	var total uint64
	j.cum = make([]uint64, 0, len(h.Counts)+1)
	for _, c := range h.Counts {
		total += c
		j.cum = append(j.cum, total)
	}
	total += h.Overflow
	j.cum = append(j.cum, total)
	switch {
	case h.Width <= 0:
		j.err = fmt.Errorf("jitter: histogram bucket width %v: %w", h.Width, rtapi.ErrInvalid)
	case total == 0:
		j.err = fmt.Errorf("jitter: histogram has no samples: %w", rtapi.ErrInvalid)
	}
	return j
}

// String describes the distribution, e.g. "normal mean 20µs stddev 5µs".
func (j Jitter) String() string {
	if j.kind == jitterNone {
		return "none"
	}
	return j.descriptor
}

func (j Jitter) validate() error { return j.err }

// jitterSource draws one thread's lateness from its own stream.
type jitterSource struct {
	j   Jitter
	pcg rand.PCG
	rng *rand.Rand
}

func (s *jitterSource) seed(seed, stream uint64) {
	s.pcg.Seed(seed, stream)
	s.rng = rand.New(&s.pcg)
}

func (s *jitterSource) set(j Jitter) { s.j = j }

// sample draws one lateness in nanoseconds, never negative.
// RT-safe.
func (s *jitterSource) sample() int64 {
	j := &s.j
	var v float64
	switch j.kind {
	case jitterNone:
		return 0
	case jitterConstant:
		v = j.a
	case jitterUniform:
		v = j.a + (j.b-j.a)*s.rng.Float64()
	case jitterNormal:
		v = j.a + j.b*s.rng.NormFloat64()
	case jitterExponential:
		v = j.a * s.rng.ExpFloat64()
	case jitterHistogram:
		return s.replay()
	}
	return max(int64(v), 0)
}

func (s *jitterSource) replay() int64 {
	j := &s.j
	r := s.rng.Uint64N(j.cum[len(j.cum)-1])
	lo, hi := 0, len(j.cum)-1 // the first i with cum[i] > r
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if j.cum[m] > r {
			hi = m
		} else {
			lo = m + 1
		}
	}
	i := lo
	if i == len(j.cum)-1 {
		return j.hi // the overflow count: the largest value seen
	}
	v := int64(i)*j.width + s.rng.Int64N(j.width)
	return min(max(v, j.lo), j.hi)
}
