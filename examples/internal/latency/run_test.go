package latency

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// The posix flavor runs unprivileged, so these tests run everywhere; they
// check what was measured, never how fast.

func TestRunPosix(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	cfg := Config{
		Options: rtapi.Options{Flavor: "posix"},
		Tasks:   []TaskDef{{Name: "servo", Period: time.Millisecond}, {Name: "base", Period: 200 * time.Microsecond}},
		Body:    Body{Busy: 50 * time.Microsecond},
	}
	// The run lasts until every task has measured a wake-up, whenever the
	// machine's load lets that come (300 ms could pass without a tick).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := Run(ctx, cfg, 0, 50*time.Millisecond, func(_ time.Duration, ts []TaskStats) {
		if len(ts) != 2 {
			t.Errorf("tick with %d tasks", len(ts))
		}
		if !slices.ContainsFunc(ts, func(s TaskStats) bool { return s.Latency.Count == 0 }) {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run until cancelled: %v", err)
	}
	if res.Flavor.Name != "posix" || res.Kernel == nil || len(res.Tasks) != 2 {
		t.Fatalf("result %+v", res)
	}
	for _, ts := range res.Tasks {
		if ts.Cycles == 0 || ts.Latency.Count == 0 || ts.Tid == 0 {
			t.Errorf("%s: cycles %d, latency samples %d, tid %d", ts.Name, ts.Cycles, ts.Latency.Count, ts.Tid)
		}
		// every body busy-waits 50 µs: its typical execution time cannot be less
		if p50 := mustQuantile(t, ts.Exec, 0.5); p50 < 50*time.Microsecond {
			t.Errorf("%s: exec p50 %v below the 50 µs busy body", ts.Name, p50)
		}
	}
	// rate-monotonic: the 200 µs task gets the highest priority
	if res.Tasks[1].Priority <= res.Tasks[0].Priority && res.Tasks[0].Policy != "SCHED_OTHER" {
		t.Errorf("priorities servo %d base %d", res.Tasks[0].Priority, res.Tasks[1].Priority)
	}
}

func TestRunCancelled(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, Config{Options: rtapi.Options{Flavor: "posix"}, Tasks: []TaskDef{{Name: "servo", Period: time.Millisecond}}}, 0, 0, nil)
	if !errors.Is(err, context.Canceled) || len(res.Tasks) != 1 {
		t.Fatalf("Run on a cancelled context: %+v, %v", res, err)
	}
}

func TestStartBadSettings(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	for name, cfg := range map[string]Config{
		"no tasks":       {Options: rtapi.Options{Flavor: "posix"}},
		"priority":       {Options: rtapi.Options{Flavor: "posix"}, Priority: 500, Tasks: []TaskDef{{Name: "a", Period: time.Millisecond}}},
		"period floor":   {Options: rtapi.Options{Flavor: "posix"}, Tasks: []TaskDef{{Name: "a", Period: time.Microsecond}}},
		"unknown flavor": {Options: rtapi.Options{Flavor: "warp"}, Tasks: []TaskDef{{Name: "a", Period: time.Millisecond}}},
	} {
		if s, err := Start(cfg); !errors.Is(err, ErrSpec) {
			if s != nil {
				s.Close()
			}
			t.Errorf("%s: Start = %v, want ErrSpec", name, err)
		}
	}
}

func TestRunRealTime(t *testing.T) {
	rttest.RequireRT(t)
	res, err := Run(context.Background(), Config{
		Options:  rtapi.Options{Flavor: "rt-preempt"},
		Tasks:    []TaskDef{{Name: "servo", Period: time.Millisecond}},
		Priority: 50,
		CPUs:     []int{0},
		Wake:     rtapi.WakeTimerfd,
	}, 200*time.Millisecond, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := res.Tasks[0]
	if ts.Policy != "SCHED_FIFO" || ts.Priority != 50 || ts.Wake != "timerfd" || len(ts.CPUs) != 1 || ts.CPUs[0] != 0 {
		t.Fatalf("task ran %s prio %d wake %s cpus %v", ts.Policy, ts.Priority, ts.Wake, ts.CPUs)
	}
	if ts.Latency.Count == 0 {
		t.Fatal("no latency samples")
	}
}

// TestRunSim runs on the sim flavor's virtual clock: the figures are
// exact, so they are checked exactly.
func TestRunSim(t *testing.T) {
	t.Parallel()
	ticks := 0
	res, err := Run(context.Background(), Config{
		Options:   rtapi.Options{Flavor: "sim"},
		Tasks:     []TaskDef{{Name: "servo", Period: time.Millisecond}, {Name: "slow", Period: 4 * time.Millisecond}},
		Body:      Body{Busy: 100 * time.Microsecond},
		SimJitter: sim.ConstantJitter(20 * time.Microsecond),
	}, 2*time.Second, 500*time.Millisecond, func(time.Duration, []TaskStats) { ticks++ })
	if err != nil {
		t.Fatal(err)
	}
	if ticks != 4 || res.Elapsed != 2*time.Second || res.Flavor.Name != "sim" {
		t.Fatalf("%d ticks, elapsed %v, flavor %s", ticks, res.Elapsed, res.Flavor.Name)
	}
	servo := res.Tasks[0]
	// 2 s of 1 ms releases; every release wakes exactly 20 µs late
	if servo.Cycles < 1999 || servo.Cycles > 2000 || servo.Latency.Max != 20_000 || mustQuantile(t, servo.Latency, 0.5) != 20*time.Microsecond {
		t.Fatalf("servo: %d cycles, latency p50 %v max %d ns", servo.Cycles, mustQuantile(t, servo.Latency, 0.5), servo.Latency.Max)
	}
	if p50 := mustQuantile(t, servo.Exec, 0.5); p50 != 100*time.Microsecond {
		t.Fatalf("servo exec p50 %v, want the declared 100µs cost", p50)
	}
	if c := res.Tasks[1].Cycles; c < 499 || c > 500 {
		t.Fatalf("slow: %d cycles, want 500", res.Tasks[1].Cycles)
	}
	if _, err := Run(context.Background(), Config{Options: rtapi.Options{Flavor: "sim"},
		Tasks: []TaskDef{{Name: "servo", Period: time.Millisecond}}}, 0, 0, nil); !errors.Is(err, ErrSpec) {
		t.Fatalf("sim without a duration: %v, want ErrSpec", err)
	}
}

// TestRunSimCountsLate replays a recorded tail on the sim flavor: wake-ups
// later than the threshold must be counted as late there too, not only on
// the Linux flavors (a replay whose p99.9 is 241 µs used to report 0 late
// wake-ups over 100 µs).
func TestRunSimCountsLate(t *testing.T) {
	t.Parallel()
	h := hist.New(time.Microsecond, 10*time.Millisecond)
	for i := range 1000 {
		switch {
		case i < 990:
			h.Record(20_000)
		default:
			h.Record(241_000)
		}
	}
	res, err := Run(context.Background(), Config{
		Options:   rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}},
		Tasks:     []TaskDef{{Name: "servo", Period: time.Millisecond}},
		SimJitter: sim.HistogramJitter(h.Snapshot()),
	}, 2*time.Second, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Tasks[0]
	var over int64
	for i, c := range s.Latency.Counts {
		if time.Duration(i)*time.Microsecond >= s.Interference.LateThreshold {
			over += int64(c)
		}
	}
	over += int64(s.Latency.Overflow)
	if s.Interference.LateThreshold != 100*time.Microsecond || over == 0 || s.Interference.Late != over {
		t.Fatalf("late over %v: counted %d, the histogram holds %d such wake-ups (p99.9 %v)",
			s.Interference.LateThreshold, s.Interference.Late, over, mustQuantile(t, s.Latency, 0.999))
	}
}

// mustQuantile is s.Quantile(q) for a q the test knows is in (0, 1].
func mustQuantile(t *testing.T, s hist.Snapshot, q float64) time.Duration {
	t.Helper()
	d, err := s.Quantile(q)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
