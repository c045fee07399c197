package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/trace"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/examples/internal/outfile"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
)

// result is one row's figures.
type result struct {
	Row     row
	Samples int64
	P50     time.Duration
	P99     time.Duration
	P999    time.Duration
	Max     time.Duration
	// Overflow counts samples past the histogram bound.
	Overflow uint64
	// The task's view (gortapi rows).
	Interference        rtapi.Interference
	InvoluntarySwitches int64
	VoluntarySwitches   int64
	MinorFaults         int64
	GOMAXPROCS          int
	// Faulted is the watchdog's report when it faulted the task.
	Faulted string `json:",omitempty"`
	// The runtime's view (runtime/metrics, gortapi rows).
	GCCycles     uint64
	STWMax       time.Duration // worst GC stop-the-world pause
	SchedP99     time.Duration // p99 of goroutine run-queue latency
	AllocMBps    float64
	GCCPUPercent float64
}

var sink atomic.Pointer[node]

// node is the load's garbage: pointerful, so the collector has to scan it.
type node struct {
	next *node
	data []byte
}

// load allocates rate bytes a second in objects of 64 B to 4 KiB, keeping
// the last live bytes reachable, until stop is closed.
func load(rate float64, live int64, workers int, stop <-chan struct{}) {
	for w := 0; w < workers; w++ {
		go func(w int) {
			ring := make([]*node, ringSlots(live, workers))
			perTick := int64(rate / float64(workers) / 1000) // bytes a millisecond
			tick := time.NewTicker(time.Millisecond)         // the load is not real-time
			defer tick.Stop()
			i, size := 0, 64
			var debt int64
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				debt += perTick
				for debt > 0 {
					n := &node{data: make([]byte, size)}
					n.next = ring[(i+1)%len(ring)]
					ring[i%len(ring)] = n
					i++
					debt -= int64(size) + 32
					size = 64 + (size*7+w*13)%4032 // 64 B … 4 KiB
				}
				sink.Store(ring[0])
			}
		}(w)
	}
}

// ringSlots is how many nodes one of workers keeps reachable to hold live
// bytes in all: about 1 KiB a node, at least one. It stays in 64 bits: int
// may have 32, and make refuses a length too large for it.
func ringSlots(live int64, workers int) int64 {
	return max(1, live/int64(workers)/1024)
}

// pinRest moves every thread of the process but the caller's future task
// thread off the real-time CPU. New threads inherit the affinity of the
// thread that creates them, and the runtime creates threads for a locked
// goroutine from its template thread, which this moves too.
func pinRest(rtCPU int) error {
	all, err := sys.Affinity(0)
	if err != nil {
		return err
	}
	var rest []int
	for _, c := range all {
		if c != rtCPU {
			rest = append(rest, c)
		}
	}
	if len(rest) == 0 {
		return fmt.Errorf("no CPU left besides %d", rtCPU)
	}
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if err := sys.SetAffinity(tid, rest); err != nil {
			return fmt.Errorf("tid %d: %w", tid, err)
		}
	}
	return nil
}

func runChild(rowJSON, settingsJSON string) int {
	var r row
	var s settings
	if err := json.Unmarshal([]byte(rowJSON), &r); err != nil {
		fail(err)
	}
	if err := json.Unmarshal([]byte(settingsJSON), &s); err != nil {
		fail(err)
	}
	if r.PinRest {
		if err := pinRest(s.CPU); err != nil {
			fail(fmt.Errorf("pin the rest of the process: %w", err))
		}
	}
	if r.GCPercent != 0 {
		debug.SetGCPercent(r.GCPercent)
	}
	if r.MemLimit {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(8 * s.Live)
	}
	if r.Procs > 0 {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + r.Procs)
	}
	stop := make(chan struct{})
	if r.Load {
		load(s.Alloc, s.Live, s.Workers, stop)
	}
	if r.LoadOnly {
		select {}
	}
	if r.Load {
		time.Sleep(time.Second) // let the heap reach its live size
	}

	opts := rtapi.Options{Flavor: "rt-preempt", HistogramBound: 100 * time.Millisecond}
	if r.Raw {
		opts.RuntimeGuard = rtapi.On // the raw sleep is the runtime guard's
	}
	rt, err := rtapi.Open(opts)
	if err != nil {
		fail(err)
	}
	spec := rtapi.TaskSpec{Name: "rt", Period: s.Period, CPU: rtapi.OnCPU(s.CPU)}
	task, err := rt.NewTask(spec, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() { // an empty body: nothing allocates here
		}
		return nil
	})
	if err != nil {
		fail(err)
	}
	if s.Trace != "" {
		stop, err := startTrace(s.Trace)
		if err != nil {
			fail(err)
		}
		defer func() {
			if err := stop(); err != nil {
				fail(err)
			}
		}()
	}
	before := readMetrics()
	if err := task.Start(); err != nil {
		fail(err)
	}
	time.Sleep(s.Duration) // the measuring goroutine is not real-time
	st := task.Stats()
	after := readMetrics()
	task.Stop()
	faulted := ""
	if err := task.Wait(); errors.Is(err, rtapi.ErrFaulted) {
		// The watchdog saw the task spin without completing a cycle:
		// a measurement, not a failure of the benchmark.
		faulted = err.Error()
	} else if err != nil {
		fail(err)
	}
	close(stop)
	_ = rt.Close()

	// The fractions are constants in (0, 1]: Quantile cannot refuse them.
	p50, _ := st.Latency.Quantile(0.50)
	p99, _ := st.Latency.Quantile(0.99)
	p999, _ := st.Latency.Quantile(0.999)
	res := result{
		Samples:             st.Latency.Count,
		P50:                 p50,
		P99:                 p99,
		P999:                p999,
		Max:                 time.Duration(st.Latency.Max),
		Overflow:            st.Latency.Overflow,
		Interference:        st.Interference,
		InvoluntarySwitches: st.InvoluntarySwitches,
		VoluntarySwitches:   st.VoluntarySwitches,
		MinorFaults:         st.MinorFaults,
		GOMAXPROCS:          runtime.GOMAXPROCS(0),
		Faulted:             faulted,
	}
	after.into(&res, before, s.Duration)
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fail(err)
	}
	return 0
}

// runtime/metrics the rows report.
const (
	mGCCycles = "/gc/cycles/total:gc-cycles"
	mPauses   = "/sched/pauses/total/gc:seconds"
	mSched    = "/sched/latencies:seconds"
	mAllocs   = "/gc/heap/allocs:bytes"
	mGCCPU    = "/cpu/classes/gc/total:cpu-seconds"
	mAllCPU   = "/cpu/classes/total:cpu-seconds"
)

type snapshot []metrics.Sample

func readMetrics() snapshot {
	s := snapshot{{Name: mGCCycles}, {Name: mPauses}, {Name: mSched}, {Name: mAllocs}, {Name: mGCCPU}, {Name: mAllCPU}}
	metrics.Read(s)
	return s
}

func (s snapshot) get(name string) metrics.Value {
	for _, m := range s {
		if m.Name == name {
			return m.Value
		}
	}
	panic("metric " + name)
}

func (s snapshot) into(res *result, before snapshot, d time.Duration) {
	res.GCCycles = s.get(mGCCycles).Uint64() - before.get(mGCCycles).Uint64()
	res.AllocMBps = float64(s.get(mAllocs).Uint64()-before.get(mAllocs).Uint64()) / d.Seconds() / (1 << 20)
	gc := s.get(mGCCPU).Float64() - before.get(mGCCPU).Float64()
	all := s.get(mAllCPU).Float64() - before.get(mAllCPU).Float64()
	if all > 0 {
		res.GCCPUPercent = 100 * gc / all
	}
	res.STWMax = histMax(s.get(mPauses).Float64Histogram(), before.get(mPauses).Float64Histogram())
	res.SchedP99 = histPercentile(s.get(mSched).Float64Histogram(), before.get(mSched).Float64Histogram(), 99)
}

// histDelta is the counts of h minus those of before (same buckets).
func histDelta(h, before *metrics.Float64Histogram) []uint64 {
	d := make([]uint64, len(h.Counts))
	for i := range h.Counts {
		d[i] = h.Counts[i] - before.Counts[i]
	}
	return d
}

// histMax is the upper edge of the highest non-empty bucket.
func histMax(h, before *metrics.Float64Histogram) time.Duration {
	d := histDelta(h, before)
	for i := len(d) - 1; i >= 0; i-- {
		if d[i] > 0 {
			return seconds(h.Buckets[i+1], h.Buckets[i])
		}
	}
	return 0
}

func histPercentile(h, before *metrics.Float64Histogram, p float64) time.Duration {
	d := histDelta(h, before)
	var total uint64
	for _, c := range d {
		total += c
	}
	if total == 0 {
		return 0
	}
	want := uint64(float64(total)*p/100 + 0.5)
	var n uint64
	for i, c := range d {
		n += c
		if n >= want {
			return seconds(h.Buckets[i+1], h.Buckets[i])
		}
	}
	return 0
}

// seconds converts a bucket's upper edge (its lower one when the upper is
// infinite) to a Duration.
func seconds(upper, lower float64) time.Duration {
	if upper > 1e9 {
		upper = lower
	}
	return time.Duration(upper * 1e9)
}

// startTrace starts -trace's execution trace into name; stop ends it and
// puts the file in place, replacing a symlink there rather than following
// it (examples/internal/outfile).
func startTrace(name string) (stop func() error, err error) {
	f, err := outfile.Create(name, 0o644)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		trace.Stop()
		defer f.Close()
		return f.Commit()
	}, nil
}
