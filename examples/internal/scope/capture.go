package scope

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/ipc"
)

// Edge is what fires the trigger.
type Edge int

// Edges.
const (
	Rising  Edge = iota // the pin crosses the level upward: was below, is at or above
	Falling             // the pin crosses the level downward: was above, is at or below
	High                // the pin is at or above the level
	Low                 // the pin is at or below the level
	Auto                // the first sample: no trigger (halscope's "auto")
)

var edgeNames = []string{"rising", "falling", "high", "low", "auto"}

func (e Edge) String() string { return edgeNames[e] }

// ParseEdge reads an edge name.
func ParseEdge(s string) (Edge, error) {
	for i, n := range edgeNames {
		if strings.EqualFold(s, n) {
			return Edge(i), nil
		}
	}
	return 0, fmt.Errorf("edge %q: want one of %s", s, strings.Join(edgeNames, ", "))
}

// Trigger says when a capture fires: on pin Pin's Edge through Level.
type Trigger struct {
	Pin   int
	Edge  Edge
	Level float64
}

// fires reports whether the trigger fires at a sample whose trigger pin
// is v, prev being the previous sample's (hasPrev false at the first).
func (tr Trigger) fires(prev, v float64, hasPrev bool) bool {
	switch tr.Edge {
	case Rising:
		return hasPrev && prev < tr.Level && v >= tr.Level
	case Falling:
		return hasPrev && prev > tr.Level && v <= tr.Level
	case High:
		return v >= tr.Level
	case Low:
		return v <= tr.Level
	}
	return true
}

// Value is a pin word as a number: a bit is 0 or 1.
func Value(t hal.Type, w uint64) float64 {
	switch t {
	case hal.TypeFloat:
		return math.Float64frombits(w)
	case hal.TypeBit:
		if w != 0 {
			return 1
		}
		return 0
	case hal.TypeS32:
		return float64(int32(uint32(w)))
	case hal.TypeU32:
		return float64(uint32(w))
	case hal.TypeS64:
		return float64(int64(w))
	}
	return float64(w)
}

// Row is one captured sample.
type Row struct {
	Cycle   uint64
	Time    int64 // ns
	Dropped uint64
	Values  []uint64
}

// Capture collects Total samples around a trigger: up to Pre before the
// sample that fires it, that sample, and the rest after. Feed it samples
// in order with Add until it says it is done.
type Capture struct {
	Trigger Trigger
	Pre     int
	Total   int
	Types   []hal.Type

	pre     []Row // the last Pre samples before the trigger, a ring
	next    int   // where pre's next sample goes
	prev    float64
	hasPrev bool
	Rows    []Row // once fired: the pre-trigger samples, then the rest
	Fired   int   // index in Rows of the trigger sample; -1 until it fires
	// From is the first cycle Add takes: SkipStale sets it past the
	// samples buffered before the capture started.
	From uint64

	// The rows' values, len(Types) words a row: one allocation each for
	// the pre ring and the rows after the trigger, not one a sample.
	preVals, postVals []uint64
}

// staleSource is what SkipStale reads: a *sampler.Reader.
type staleSource interface {
	Buffered() (int, error)
	TryNext() (sampler.Sample, error)
}

// SkipStale arms the capture on fresh samples only: it reads and drops
// the samples rd held as the capture started (they can be minutes old,
// and would fire the trigger at once), at most as many as were buffered
// then, and makes Add ignore any sample of their cycles or earlier. It
// returns how many it dropped and the first and last one's cycle.
func (c *Capture) SkipStale(rd staleSource) (skipped int, first, last uint64, err error) {
	n, err := rd.Buffered()
	if err != nil {
		return 0, 0, 0, err
	}
	for ; skipped < n; skipped++ {
		s, err := rd.TryNext()
		if errors.Is(err, ipc.ErrEmpty) {
			break // another reader took them
		}
		if err != nil {
			return skipped, first, last, err
		}
		if skipped == 0 {
			first = s.Cycle
		}
		last = s.Cycle
	}
	if skipped > 0 {
		c.From = max(c.From, last+1)
	}
	return skipped, first, last, nil
}

// NewCapture makes a capture of total samples, pre of them before the
// trigger (0 <= pre < total).
func NewCapture(tr Trigger, pre, total int, types []hal.Type) *Capture {
	return &Capture{Trigger: tr, Pre: pre, Total: total, Types: types, Fired: -1, pre: make([]Row, 0, pre)}
}

// Add takes the next sample (copying its values) and reports whether the
// capture is complete. Once it is, Add keeps nothing more. While it waits
// for the trigger with its pre-trigger window full, it does not allocate.
func (c *Capture) Add(s sampler.Sample) bool {
	if c.Fired >= 0 && len(c.Rows) >= c.Total {
		return true
	}
	if s.Cycle < c.From {
		return false // stale: buffered before the capture started
	}
	if c.Fired >= 0 {
		c.Rows = append(c.Rows, c.row(s, &c.postVals, c.Total-c.Fired, len(c.Rows)-c.Fired))
		return len(c.Rows) >= c.Total
	}
	v := Value(c.Types[c.Trigger.Pin], s.Values[c.Trigger.Pin])
	// Armed only once the pre-trigger samples are in, as LinuxCNC's
	// scope_rt.c waits in PRE_TRIG before TRIG_WAIT.
	fire := len(c.pre) == c.Pre && c.Trigger.fires(c.prev, v, c.hasPrev)
	c.prev, c.hasPrev = v, true
	if !fire {
		if c.Pre == 0 {
			return false
		}
		if len(c.pre) < c.Pre {
			c.pre = append(c.pre, c.row(s, &c.preVals, c.Pre, len(c.pre)))
		} else {
			c.pre[c.next] = c.row(s, &c.preVals, c.Pre, c.next)
		}
		c.next = (c.next + 1) % c.Pre
		return false
	}
	c.Rows = make([]Row, 0, c.Total)
	if len(c.pre) == c.Pre {
		c.Rows = append(c.Rows, c.pre[c.next:]...)
		c.Rows = append(c.Rows, c.pre[:c.next]...)
	} else {
		c.Rows = append(c.Rows, c.pre...)
	}
	c.Fired = len(c.Rows)
	c.Rows = append(c.Rows, c.row(s, &c.postVals, c.Total-c.Fired, 0))
	return len(c.Rows) >= c.Total
}

// row copies s into a Row whose values are slot k of slab (slots rows of
// len(Types) words, made at the first use); a sample of another length
// gets values of its own.
func (c *Capture) row(s sampler.Sample, slab *[]uint64, slots, k int) Row {
	r := Row{Cycle: s.Cycle, Time: s.Time, Dropped: s.Dropped}
	n := len(c.Types)
	if n == 0 || len(s.Values) != n || k < 0 || k >= slots {
		r.Values = append([]uint64(nil), s.Values...)
		return r
	}
	if *slab == nil {
		*slab = make([]uint64, slots*n)
	}
	r.Values = (*slab)[k*n : (k+1)*n : (k+1)*n]
	copy(r.Values, s.Values)
	return r
}

// Gaps returns how many cycles are missing between the captured rows
// (dropped samples or a disabled sampler).
func (c *Capture) Gaps() uint64 {
	var n uint64
	for i := 1; i < len(c.Rows); i++ {
		if d := c.Rows[i].Cycle - c.Rows[i-1].Cycle; d > 1 {
			n += d - 1
		}
	}
	return n
}
