package latencyfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// Recording is the JSON document examples/latency-test writes with -json:
// one run of periodic measurement tasks and what the machine was.
type Recording struct {
	Tool        string               `json:"tool"`        // the writer, "gortapi latency-test"
	Started     time.Time            `json:"started"`     // when the run started, UTC
	Elapsed     time.Duration        `json:"elapsed_ns"`  // how long it ran
	Interrupted bool                 `json:"interrupted"` // stopped early (SIGINT) rather than at its duration
	Kernel      *kerneldetect.Report `json:"kernel"`      // the kernel detection at start; nil if not recorded
	Flavor      Flavor               `json:"flavor"`
	Settings    Settings             `json:"settings"`
	Tasks       []Task               `json:"tasks"`
}

// Flavor is the flavor the run used (rtapi.FlavorInfo).
type Flavor struct {
	Name     string `json:"name"`     // "rt-preempt", "posix", "sim", ...
	RealTime bool   `json:"realtime"` // whether it gives real-time guarantees
	Why      string `json:"why"`      // why it was chosen, and how to do better
}

// Settings are the run's settings, as latency-test's flags gave them.
type Settings struct {
	Duration       time.Duration `json:"duration_ns"`        // the run's requested length (0: until interrupted)
	Priority       int           `json:"priority"`           // the highest task priority
	CPUs           []int         `json:"cpus"`               // the CPUs tasks were pinned to, in turn; empty: not pinned
	Wake           string        `json:"wake"`               // the requested wake-up mode (rtapi.WakeMode)
	Overrun        string        `json:"overrun"`            // the overrun policy (rtapi.OverrunPolicy)
	HistogramBound time.Duration `json:"histogram_bound_ns"` // latencies above it count as overflow
	GCShield       string        `json:"gc_shield"`          // Options.RuntimeGuard: auto, on or off
	Watchdog       time.Duration `json:"watchdog_ns"`        // the hang watchdog's timeout; 0: none
	VanillaFIFO    bool          `json:"vanilla_fifo"`       // SCHED_FIFO plus POSIX timers on a non-real-time kernel
	BodyBusy       time.Duration `json:"body_busy_ns"`       // how long each cycle's body busy-waited
	Loads          []string      `json:"loads"`              // the background loads, as given
}

// Task is one measurement task's statistics.
type Task struct {
	Name                string        `json:"name"`
	Tid                 int           `json:"tid"`
	Period              time.Duration `json:"period_ns"`
	Policy              string        `json:"policy"` // "SCHED_FIFO", "SCHED_OTHER", ...
	Priority            int           `json:"priority"`
	CPUs                []int         `json:"cpus"`     // where the thread was allowed to run
	Wake                string        `json:"wake"`     // the wake-up mechanism it got
	Degraded            string        `json:"degraded"` // why it got less than asked for; "" when it did not
	Cycles              int64         `json:"cycles"`
	Overruns            int64         `json:"overruns"`
	WaitErrors          int64         `json:"wait_errors"`
	MaxJitter           time.Duration `json:"max_jitter_ns"`
	MinorFaults         int64         `json:"minor_faults"`
	MajorFaults         int64         `json:"major_faults"`
	VoluntarySwitches   int64         `json:"voluntary_switches"`
	InvoluntarySwitches int64         `json:"involuntary_switches"`
	// SpinBreaks: the runtime guard's demotions of the thread (rtapi.Stats).
	SpinBreaks   int64              `json:"spin_breaks"`
	Interference rtapi.Interference `json:"interference"`
	Latency      Series             `json:"latency"` // wake-up latency: how late each cycle started
	Exec         Series             `json:"exec"`    // execution time of each cycle's body
}

// Series is one measured quantity: its histogram, and the figures drawn
// from it (Summarize) for readers that want only those.
type Series struct {
	Summary   Summary       `json:"summary"`
	Histogram hist.Snapshot `json:"histogram"`
}

// Summary condenses a histogram into the figures every report shows;
// percentiles are bucket upper edges capped at Max (hist.Snapshot.Quantile).
type Summary struct {
	Count    int64         `json:"count"`    // samples, overflow included
	Overflow uint64        `json:"overflow"` // samples above the histogram's bound
	Min      time.Duration `json:"min_ns"`
	Avg      time.Duration `json:"avg_ns"`
	P50      time.Duration `json:"p50_ns"`
	P90      time.Duration `json:"p90_ns"`
	P99      time.Duration `json:"p99_ns"`
	P999     time.Duration `json:"p99_9_ns"`
	Max      time.Duration `json:"max_ns"`
}

// Summarize computes a Summary from a histogram.
func Summarize(h hist.Snapshot) Summary {
	s := Summary{
		Count:    h.Count,
		Overflow: h.Overflow,
		Min:      time.Duration(h.Min),
		Avg:      h.Mean(),
		Max:      time.Duration(h.Max),
	}
	// The fractions are constants in (0, 1]: Quantile cannot refuse them.
	s.P50, _ = h.Quantile(0.50)
	s.P90, _ = h.Quantile(0.90)
	s.P99, _ = h.Quantile(0.99)
	s.P999, _ = h.Quantile(0.999)
	return s
}

// Read decodes a Recording; a document without tasks is an error.
func Read(r io.Reader) (*Recording, error) {
	var rec Recording
	if err := json.NewDecoder(r).Decode(&rec); err != nil {
		return nil, fmt.Errorf("latency recording: %w", err)
	}
	if len(rec.Tasks) == 0 {
		return nil, errors.New("latency recording: no tasks")
	}
	return &rec, nil
}

// Write encodes the recording as indented JSON, as latency-test -json does.
func (rec *Recording) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rec)
}

// Task returns the recorded task whose period is period, else the first
// task (with period 0, always the first); false when there is none.
func (rec *Recording) Task(period time.Duration) (Task, bool) {
	if len(rec.Tasks) == 0 {
		return Task{}, false
	}
	for _, t := range rec.Tasks {
		if period != 0 && t.Period == period {
			return t, true
		}
	}
	return rec.Tasks[0], true
}

// MaxLatencyFile bounds what ReadLatency reads.
const MaxLatencyFile = 64 << 20

// ReadLatency reads one wake-up latency histogram from a Recording (its
// task with period, Recording.Task), a hist.Snapshot as JSON, or the first
// column of a cyclictest histogram file. A histogram without samples or
// width, with over hist.MaxBuckets buckets or overflowing counts, or r over
// MaxLatencyFile bytes, is an error matching rtapi.ErrInvalid.
func ReadLatency(r io.Reader, period time.Duration) (hist.Snapshot, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxLatencyFile+1))
	if err != nil {
		return hist.Snapshot{}, err
	}
	if len(data) > MaxLatencyFile {
		return hist.Snapshot{}, fmt.Errorf("latency file larger than %d MiB: %w", MaxLatencyFile>>20, rtapi.ErrInvalid)
	}
	var h hist.Snapshot
	rec, recErr := Read(bytes.NewReader(data))
	if errors.Is(recErr, rtapi.ErrInvalid) {
		return hist.Snapshot{}, recErr // a histogram too large to decode
	}
	if recErr == nil {
		t, _ := rec.Task(period)
		h = t.Latency.Histogram
	} else if jsonErr := json.Unmarshal(data, &h); errors.Is(jsonErr, rtapi.ErrInvalid) {
		return hist.Snapshot{}, jsonErr
	} else if jsonErr != nil || h.Width == 0 && len(h.Counts) == 0 {
		hs, histErr := ReadHistfile(bytes.NewReader(data))
		if histErr != nil {
			return hist.Snapshot{}, fmt.Errorf("neither a latency recording, a histogram as JSON nor a cyclictest histogram file: %w", histErr)
		}
		h = hs[0]
	}
	return h, checkReplayable(h)
}

// ReadJitter is ReadLatency's histogram as sim.HistogramJitter: each cycle
// is woken as late as a sample drawn from it.
func ReadJitter(r io.Reader, period time.Duration) (sim.Jitter, error) {
	h, err := ReadLatency(r, period)
	if err != nil {
		return sim.Jitter{}, err
	}
	return sim.HistogramJitter(h), nil
}

// checkReplayable refuses what a file can hold but a replay cannot use.
func checkReplayable(h hist.Snapshot) error {
	switch {
	case h.Width <= 0:
		return fmt.Errorf("latency histogram: bucket width %v: %w", h.Width, rtapi.ErrInvalid)
	case len(h.Counts) > hist.MaxBuckets:
		return fmt.Errorf("latency histogram: %d buckets, more than %d: %w", len(h.Counts), hist.MaxBuckets, rtapi.ErrInvalid)
	}
	total := h.Overflow
	for _, c := range h.Counts {
		var carry uint64
		if total, carry = bits.Add64(total, c, 0); carry != 0 {
			return fmt.Errorf("latency histogram: counts overflow: %w", rtapi.ErrInvalid)
		}
	}
	if total == 0 {
		return fmt.Errorf("latency histogram: no samples: %w", rtapi.ErrInvalid)
	}
	return nil
}
