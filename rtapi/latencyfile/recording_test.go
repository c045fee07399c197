package latencyfile_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/latencyfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// histogramOf records latencies (ns) into a 1 µs histogram bounded at 100 µs.
func histogramOf(ns ...int64) hist.Snapshot {
	h := hist.New(time.Microsecond, 100*time.Microsecond)
	for _, v := range ns {
		h.Record(time.Duration(v))
	}
	return h.Snapshot()
}

func recording() *latencyfile.Recording {
	fast, slow := histogramOf(3_000, 4_000, 5_500), histogramOf(20_000, 30_000, 250_000)
	return &latencyfile.Recording{
		Tool:    "gortapi latency-test",
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Elapsed: 3 * time.Second,
		Flavor:  latencyfile.Flavor{Name: "rt-preempt", RealTime: true, Why: "PREEMPT_RT kernel"},
		Settings: latencyfile.Settings{Duration: 3 * time.Second, Priority: 98, CPUs: []int{1},
			HistogramBound: 100 * time.Microsecond, Loads: []string{}},
		Tasks: []latencyfile.Task{
			{Name: "base", Period: 50 * time.Microsecond, Cycles: 3,
				Latency: latencyfile.Series{Summary: latencyfile.Summarize(fast), Histogram: fast}},
			{Name: "servo", Period: time.Millisecond, Cycles: 3,
				Latency: latencyfile.Series{Summary: latencyfile.Summarize(slow), Histogram: slow}},
		},
	}
}

func TestRecordingRoundTrip(t *testing.T) {
	t.Parallel()
	in := recording()
	var buf bytes.Buffer
	require.NoError(t, in.Write(&buf))
	// The keys latency-test has always written: durations in integer ns.
	for _, key := range []string{`"elapsed_ns": 3000000000`, `"period_ns": 1000000`, `"histogram_bound_ns": 100000`,
		`"p99_ns": `, `"bucket_width_ns": 1000`} {
		require.Contains(t, buf.String(), key)
	}
	out, err := latencyfile.Read(&buf)
	require.NoError(t, err)
	require.Equal(t, in, out)
}

func TestTaskByPeriod(t *testing.T) {
	t.Parallel()
	rec := recording()
	for period, want := range map[time.Duration]string{
		time.Millisecond:      "servo",
		50 * time.Microsecond: "base",
		0:                     "base", // none asked: the first
		time.Second:           "base", // none has it: the first
	} {
		task, ok := rec.Task(period)
		require.True(t, ok)
		require.Equal(t, want, task.Name, "period %v", period)
	}
	_, ok := (&latencyfile.Recording{}).Task(time.Millisecond)
	require.False(t, ok, "no tasks")
}

// ReadLatency takes each of the three formats a user may hold.
func TestReadLatencyFormats(t *testing.T) {
	var doc bytes.Buffer
	require.NoError(t, recording().Write(&doc))
	h, err := latencyfile.ReadLatency(bytes.NewReader(doc.Bytes()), time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 250*time.Microsecond, h.Max, "the servo task's latency")

	bare, err := json.Marshal(histogramOf(7_000, 8_000))
	require.NoError(t, err)
	h, err = latencyfile.ReadLatency(bytes.NewReader(bare), time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 8*time.Microsecond, h.Max, "a bare histogram")

	f, err := os.Open("testdata/cyclictest-2.40-1thread.hist")
	require.NoError(t, err)
	defer f.Close()
	h, err = latencyfile.ReadLatency(f, time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 2685*time.Microsecond, h.Max, "cyclictest's histogram file")

	j, err := latencyfile.ReadJitter(bytes.NewReader(doc.Bytes()), time.Millisecond)
	require.NoError(t, err)
	require.Contains(t, j.String(), "histogram of 3 samples")
}

// What a file may hold but a replay cannot use is an error that matches
// rtapi.ErrInvalid, or says which format it is not; never a panic.
func TestReadLatencyRefuses(t *testing.T) {
	t.Parallel()
	empty := histogramOf()
	noWidth := histogramOf(1_000)
	noWidth.Width = 0
	wide := histogramOf(1_000)
	wide.Counts = make([]uint64, hist.MaxBuckets+1)
	wide.Counts[0] = 1
	overflowing := histogramOf(1_000)
	overflowing.Counts[0] = ^uint64(0) // plus the sample in bucket 1
	for name, c := range map[string]struct {
		doc     any
		invalid bool
	}{
		"no samples":           {doc: empty, invalid: true},
		"no bucket width":      {doc: noWidth, invalid: true},
		"too many buckets":     {doc: wide, invalid: true},
		"counts overflow":      {doc: overflowing, invalid: true},
		"recording, no sample": {doc: latencyfile.Recording{Tasks: []latencyfile.Task{{Name: "idle"}}}, invalid: true},
		"no tasks":             {doc: latencyfile.Recording{Tool: "gortapi latency-test"}},
		"other JSON":           {doc: map[string]int{"answer": 42}},
		"text":                 {doc: "package main"},
		"nothing":              {doc: nil},
	} {
		var data []byte
		switch d := c.doc.(type) {
		case string:
			data = []byte(d)
		case nil:
		default:
			var err error
			data, err = json.Marshal(d)
			require.NoError(t, err)
		}
		_, err := latencyfile.ReadLatency(bytes.NewReader(data), 0)
		require.Error(t, err, name)
		if c.invalid {
			require.ErrorIs(t, err, rtapi.ErrInvalid, name)
		} else {
			require.Contains(t, err.Error(), "neither a latency recording", name)
		}
		_, err = latencyfile.ReadJitter(bytes.NewReader(data), 0)
		require.Error(t, err, name)
	}
}

// endless is a reader that never ends: it fails once more than limit
// bytes were read from it.
type endless struct{ read, limit int }

var errReadOn = errors.New("read on past the limit")

// spaces is what endless reads: JSON whitespace, which a decoder would
// read on through. Copying it is ten times faster than a byte loop.
var spaces = bytes.Repeat([]byte{' '}, 64<<10)

func (e *endless) Read(p []byte) (int, error) {
	if e.read > e.limit {
		return 0, errReadOn
	}
	for n := 0; n < len(p); {
		n += copy(p[n:], spaces)
	}
	e.read += len(p)
	return len(p), nil
}

// ReadLatency reads at most MaxLatencyFile bytes: a reader that never
// ends is refused, not read until memory runs out.
func TestReadLatencyBoundsItsInput(t *testing.T) {
	t.Parallel()
	r := &endless{limit: 2 * latencyfile.MaxLatencyFile}
	_, err := latencyfile.ReadLatency(r, 0)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.Contains(t, err.Error(), "larger than")
	require.LessOrEqual(t, r.read, latencyfile.MaxLatencyFile+64<<10)
}

func TestReadRefuses(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "{", `{"tool":"x"}`, `{"tasks":[]}`, `{"tasks":"no"}`} {
		_, err := latencyfile.Read(strings.NewReader(bad))
		require.Error(t, err, "%q", bad)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteReportsTheWritersError(t *testing.T) {
	t.Parallel()
	require.ErrorContains(t, recording().Write(failingWriter{}), "disk full")
}

func FuzzReadLatency(f *testing.F) {
	var doc bytes.Buffer
	if err := recording().Write(&doc); err != nil {
		f.Fatal(err)
	}
	f.Add(doc.String())
	f.Add(`{"bucket_width_ns":1000,"counts":[0,3],"count":3,"max_ns":1500}`)
	f.Add("# Histogram\n000000 000001\n# Max Latencies: 00001\n")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := latencyfile.ReadLatency(strings.NewReader(s), time.Millisecond)
		if err != nil {
			return
		}
		if h.Width <= 0 || len(h.Counts) > hist.MaxBuckets {
			t.Fatalf("accepted %+v", h)
		}
		_ = fmt.Sprint(sim.HistogramJitter(h))
	})
}
