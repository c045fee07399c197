package promrt_test

import (
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/promrt"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// simTask runs a 1 ms task for 100 ms of virtual time, every wake-up
// 20 µs late and every body 50 µs long, so the figures are exact.
func simTask(t testing.TB) *rtapi.Task {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond, Priority: 90, LateThreshold: 10 * time.Microsecond},
		func(tc *rtapi.TaskContext) error {
			for tc.WaitPeriod() {
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	clock, err := sim.New(rt)
	if err != nil {
		t.Fatal(err)
	}
	if err := clock.SetTask(task, sim.TaskConfig{Jitter: sim.ConstantJitter(20 * time.Microsecond), Cost: 50 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	if err := task.Start(); err != nil {
		t.Fatal(err)
	}
	if err := clock.Advance(100*time.Millisecond + 500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	return task
}

// TestScrapeOverLoopback serves a registry with the collector on
// 127.0.0.1 and checks what a scrape returns.
func TestScrapeOverLoopback(t *testing.T) {
	task := simTask(t)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(promrt.NewCollector(task))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String() + "/metrics"

	const want = `
# HELP gortapi_task_cycles_total Releases the task's body has run.
# TYPE gortapi_task_cycles_total counter
gortapi_task_cycles_total{task="servo"} 100
# HELP gortapi_task_info A task's scheduling: policy, priority, wake mode, and why it runs degraded (empty when it does not).
# TYPE gortapi_task_info gauge
gortapi_task_info{degraded="",policy="virtual",priority="90",task="servo",wake="nanosleep"} 1
# HELP gortapi_task_late_wakeups_all_total Wake-ups later than gortapi_task_late_threshold_seconds, whatever their cause (on the sim flavor, the only late count).
# TYPE gortapi_task_late_wakeups_all_total counter
gortapi_task_late_wakeups_all_total{task="servo"} 100
# HELP gortapi_task_late_wakeups_total Wake-ups later than gortapi_task_late_threshold_seconds, by first cause; the total is gortapi_task_late_wakeups_all_total.
# TYPE gortapi_task_late_wakeups_total counter
gortapi_task_late_wakeups_total{cause="blocked",task="servo"} 0
gortapi_task_late_wakeups_total{cause="gc",task="servo"} 0
gortapi_task_late_wakeups_total{cause="preempted",task="servo"} 0
gortapi_task_late_wakeups_total{cause="unexplained",task="servo"} 0
# HELP gortapi_task_overruns_total Releases missed because a body ran past its next release.
# TYPE gortapi_task_overruns_total counter
gortapi_task_overruns_total{task="servo"} 0
`
	if err := testutil.ScrapeAndCompare(url, strings.NewReader(want),
		"gortapi_task_cycles_total", "gortapi_task_info", "gortapi_task_late_wakeups_total", "gortapi_task_late_wakeups_all_total",
		"gortapi_task_overruns_total"); err != nil {
		t.Fatal(err)
	}
	// the latency histogram, folded exactly from 1 µs buckets: every
	// sample is 20 µs, in the bucket [20, 21) µs, so le=2e-05 holds none
	const wantLatency = `
# HELP gortapi_task_wakeup_latency_seconds Wake-up latency: woken minus scheduled release, one sample per wake-up.
# TYPE gortapi_task_wakeup_latency_seconds histogram
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="1e-06"} 0
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="2e-06"} 0
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="5e-06"} 0
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="1e-05"} 0
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="2e-05"} 0
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="5e-05"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.0001"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.0002"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.0005"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.001"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.002"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.005"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.01"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.02"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.05"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.1"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.2"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="0.5"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="1"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="2"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="5"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="10"} 100
gortapi_task_wakeup_latency_seconds_bucket{task="servo",le="+Inf"} 100
gortapi_task_wakeup_latency_seconds_sum{task="servo"} 0.002
gortapi_task_wakeup_latency_seconds_count{task="servo"} 100
`
	if err := testutil.ScrapeAndCompare(url, strings.NewReader(wantLatency), "gortapi_task_wakeup_latency_seconds"); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.CollectAndLint(promrt.NewCollector(task)); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
}

func TestMisuse(t *testing.T) {
	for name, f := range map[string]func(){
		"Add(nil)":             func() { promrt.NewCollector().Add(nil) },
		"NewCollector(nil)":    func() { promrt.NewCollector(nil) },
		"NewHALCollector(nil)": func() { promrt.NewHALCollector(nil) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "promrt:") {
					t.Errorf("%s: panic %v, want one naming promrt", name, r)
				}
			}()
			f()
		}()
	}
	// an empty collector collects nothing and is valid
	if n := testutil.CollectAndCount(promrt.NewCollector()); n != 0 {
		t.Fatalf("empty collector: %d metrics", n)
	}
}

// TestScrapeCostFollowsTheBucketsInUse scrapes 64 tasks whose histograms
// are bounded at 1 s (a million 1 µs buckets each) but hold samples in
// their first hundred: one scrape must allocate what the metrics take, a
// few hundred kilobytes, not a copy of every bucket. Before, each scrape
// copied both histograms of every task: 64 × 2 × 8 MB, 1 GB per scrape.
func TestScrapeCostFollowsTheBucketsInUse(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	clock, err := sim.New(rt)
	if err != nil {
		t.Fatal(err)
	}
	c := promrt.NewCollector()
	for i := 0; i < 64; i++ {
		task, err := rt.NewTask(rtapi.TaskSpec{Name: fmt.Sprintf("axis%d", i), Period: time.Millisecond, HistogramBound: time.Second},
			func(tc *rtapi.TaskContext) error {
				for tc.WaitPeriod() {
				}
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if err := clock.SetTask(task, sim.TaskConfig{Jitter: sim.ConstantJitter(time.Duration(i) * time.Microsecond), Cost: 50 * time.Microsecond}); err != nil {
			t.Fatal(err)
		}
		if err := task.Start(); err != nil {
			t.Fatal(err)
		}
		c.Add(task)
	}
	if err := clock.Advance(10*time.Millisecond + 500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	scrape := func() {
		families, err := reg.Gather()
		if err != nil || len(families) == 0 {
			t.Fatalf("gather: %d families, %v", len(families), err)
		}
	}
	scrape() // the registry's first-use allocations
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	scrape()
	runtime.ReadMemStats(&after)
	const limit = 8 << 20
	if n := after.TotalAlloc - before.TotalAlloc; n > limit {
		t.Fatalf("one scrape of 64 tasks with 1 s histograms allocated %d bytes, want at most %d", n, limit)
	}
}

// BenchmarkCollect is one scrape's work for one task with the default
// 10 ms histograms (two folds of the buckets in use into 22 buckets).
func BenchmarkCollect(b *testing.B) {
	task := simTask(b)
	c := promrt.NewCollector(task)
	ch := make(chan prometheus.Metric, 64)
	for b.Loop() {
		c.Collect(ch)
		for len(ch) > 0 {
			<-ch
		}
	}
}
