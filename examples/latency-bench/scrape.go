package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime/metrics"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gortapi/gortapi/examples/internal/outfile"
	"github.com/gortapi/gortapi/internal/reexec"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/promrt"
)

// The scrape group (issue 20 item 7): a HAL host's 1 kHz SCHED_FIFO
// thread while it serves /metrics to a flood of scrapers in another
// process, over 127.0.0.1, as halhost -metrics-addr does.

const (
	scrapeFlood      = 64 // concurrent scraper loops
	rowScrapeNone    = "HAL host, no scrapers"
	rowScrapeFlood   = "HAL host, 64 scrapers"
	rowScrapeBare    = "HAL host, 64 scrapers, bare http.Server"
	scrapeHistBound  = time.Second // the issue's: histograms of 10⁶ buckets
	scrapeRampUp     = 500 * time.Millisecond
	scrapeThreadName = "servo"
)

// scrapeGroup compares the host without scrapers, flooded through
// promrt's server (Listen, NewServer: one connection at a time) and
// flooded through a bare http.Server with promhttp.HandlerOpts{} (what
// halhost served before).
func scrapeGroup(b *bench) group {
	host := func(scrapers int, bare bool) func() (childResult, error) {
		return func() (childResult, error) {
			return b.childRaw(childSpec{Kind: "scrapehost", Flavor: "rt-preempt", Interval: time.Millisecond,
				Duration: b.s.duration, Priority: b.s.priority, CPU: b.s.cpu, HistBound: scrapeHistBound,
				Scrapers: scrapers, BareServer: bare})
		}
	}
	return group{
		id: "scrape", title: "A HAL host's 1 kHz thread under a scrape flood from another process", metric: "latency", needFIFO: true,
		desc: fmt.Sprintf("A HAL thread at 1 ms (rt-preempt flavor, pinned, histograms bounded at %v) runs siggen while its "+
			"process serves /metrics (promrt's collectors) on 127.0.0.1. The flood is %d loops of HTTP GET /metrics in "+
			"another process (this program again), started %v before the measured window. The promrt rows serve through "+
			"promrt.Listen and NewServer (one connection at a time, timeouts) as halhost -metrics-addr does; the bare row "+
			"through http.Server and promhttp.HandlerOpts{}, as halhost did before. Each row's note counts the scrapes "+
			"and the host's GC cycles, allocation and goroutine scheduling latency (runtime/metrics) over the window. "+
			"Goal (issue 20): max and p99.9 with the flood at most 1.25 × without.", scrapeHistBound, scrapeFlood, scrapeRampUp),
		variants: []variant{
			{name: rowScrapeNone, run: host(0, false)},
			{name: rowScrapeFlood, run: host(scrapeFlood, false)},
			{name: rowScrapeBare, run: host(scrapeFlood, true)},
		},
		ratios: []ratioSpec{
			{"64 scrapers / none", rowScrapeFlood, rowScrapeNone},
			{"64 scrapers, bare server / none", rowScrapeBare, rowScrapeNone},
		},
	}
}

// scrapeGoals is issue 20's target: the flooded thread's max and p99.9 at
// most 1.25 × its figures without scrapers (medians over the rounds).
func scrapeGoals(res results) []goalResult {
	g := findGroup(res, "scrape")
	if g == nil || g.Skipped != "" {
		return nil
	}
	r := findRatio(g, "64 scrapers / none")
	var out []goalResult
	for _, q := range []struct {
		name string
		get  func(*ratioResult) float64
	}{{"max", func(r *ratioResult) float64 { return r.Max }}, {"p99.9", func(r *ratioResult) float64 { return r.P999 }}} {
		gr := goalResult{Goal: "scrape flood " + q.name + ": 64 scrapers ≤ 1.25 × none", Limit: 1.25}
		if r == nil {
			gr.Note = "not measured"
		} else {
			gr.Measured = q.get(r)
			gr.Met = gr.Measured <= gr.Limit
		}
		out = append(out, gr)
	}
	return out
}

// scrapeCounts is what a scrapers child prints when it is stopped.
type scrapeCounts struct {
	Attempts    int64 `json:"attempts"`
	OK          int64 `json:"ok"`
	Unavailable int64 `json:"unavailable"` // 503: over the in-flight limit
	Errors      int64 `json:"errors"`      // connection or timeout errors
}

// childScrapers loops spec.Scrapers concurrent HTTP GETs of spec.URL
// until SIGTERM, then prints its counts.
func childScrapers(spec childSpec, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client := &http.Client{Timeout: 5 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: spec.Scrapers, DisableCompression: true}}
	var c scrapeCounts
	var wg sync.WaitGroup
	for range spec.Scrapers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				atomic.AddInt64(&c.Attempts, 1)
				req, _ := http.NewRequestWithContext(ctx, "GET", spec.URL, nil)
				resp, err := client.Do(req)
				if err != nil {
					atomic.AddInt64(&c.Errors, 1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					atomic.AddInt64(&c.OK, 1)
				case http.StatusServiceUnavailable:
					atomic.AddInt64(&c.Unavailable, 1)
				default:
					atomic.AddInt64(&c.Errors, 1)
				}
			}
		}()
	}
	wg.Wait()
	return json.NewEncoder(stdout).Encode(c)
}

// childScrapeHost runs the scrape group's host: a HAL thread at
// spec.Interval serving /metrics, flooded by spec.Scrapers loops in a
// child process when spec.Scrapers > 0.
func childScrapeHost(spec childSpec) (childResult, error) {
	opts := rtapi.Options{Flavor: spec.Flavor, HistogramBound: spec.HistBound}
	if spec.CPU >= 0 {
		opts.CPUs = []int{spec.CPU}
	}
	x, err := openHAL(opts, []hal.ThreadSpec{{Name: scrapeThreadName, Period: spec.Interval, Priority: spec.Priority}},
		"loadrt siggen\naddf siggen.0.update "+scrapeThreadName+"\n")
	if err != nil {
		return childResult{}, err
	}
	defer x.close()
	h, th := x.h, x.threads[0]
	reg := prometheus.NewRegistry()
	reg.MustRegister(promrt.NewCollector(th.Task()), promrt.NewHALCollector(h))
	var ln net.Listener
	var srv *http.Server
	if spec.BareServer {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return childResult{}, err
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv = &http.Server{Handler: mux}
	} else {
		if ln, err = promrt.Listen("127.0.0.1:0"); err != nil {
			return childResult{}, err
		}
		srv = promrt.NewServer(reg)
	}
	go srv.Serve(ln)
	defer srv.Close()
	if err := h.Start(); err != nil {
		return childResult{}, err
	}
	var flood *exec.Cmd
	var counts bytes.Buffer
	if spec.Scrapers > 0 {
		data, _ := json.Marshal(childSpec{Kind: "scrapers", Scrapers: spec.Scrapers, URL: "http://" + ln.Addr().String() + "/metrics"})
		flood = reexec.Command(childRole, string(data))
		flood.Stdout, flood.Stderr = &counts, os.Stderr
		if err := flood.Start(); err != nil {
			return childResult{}, fmt.Errorf("start scrapers: %w", err)
		}
		defer func() {
			if flood.ProcessState == nil {
				flood.Process.Kill()
				flood.Wait()
			}
		}()
	}
	time.Sleep(scrapeRampUp) // the parent's clock, not a real-time path
	mark := th.Task().Stats()
	before := readRuntimeMetrics()
	stopTrace := startTrace(os.Getenv("LATENCY_BENCH_TRACE"))
	time.Sleep(spec.Duration)
	stopTrace()
	window, err := th.Task().Stats().Since(mark)
	after := readRuntimeMetrics()
	if err != nil {
		return childResult{}, err
	}
	var c scrapeCounts
	if flood != nil {
		flood.Process.Signal(syscall.SIGTERM)
		if err := flood.Wait(); err != nil {
			return childResult{}, fmt.Errorf("scrapers: %w", err)
		}
		if err := json.Unmarshal(counts.Bytes(), &c); err != nil {
			return childResult{}, fmt.Errorf("scrapers' counts: %w", err)
		}
	}
	if err := h.Stop(); err != nil {
		return childResult{}, err
	}
	note := fmt.Sprintf("%d scrapes (%d served, %d 503, %d errors); host: %s", c.Attempts, c.OK, c.Unavailable, c.Errors, after.since(before))
	return childResult{Latency: window.Latency, Exec: window.Exec, Policy: window.Policy, Wake: window.Wake,
		Flavor: x.rt.Flavor().Name, Cycles: window.Cycles, Overruns: window.Overruns, Interference: &window.Interference,
		Note: note}, nil
}

// startTrace writes a runtime/trace of the window to file, when not ""
// (LATENCY_BENCH_TRACE: the scrape host's window, or a gortapi child's
// run; each run replaces the file, so the last one's stays), and returns
// the function that ends it. Read it with go tool trace -pprof=sched
// (time runnable goroutines waited for a P, by stack) or -d=parsed.
func startTrace(file string) func() {
	if file == "" {
		return func() {}
	}
	f, err := outfile.Create(file, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "latency-bench: trace:", err)
		return func() {}
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, "latency-bench: trace:", err)
		f.Close()
		return func() {}
	}
	return func() {
		trace.Stop()
		if err := f.Commit(); err != nil {
			fmt.Fprintln(os.Stderr, "latency-bench: trace:", err)
		}
	}
}

// runtimeSample is the host process's runtime/metrics the scrape group
// reports: how much the serving made the Go runtime work.
type runtimeSample struct {
	gcCycles, allocBytes uint64
	schedLat, gcPauses   *metrics.Float64Histogram
}

var runtimeNames = []string{"/gc/cycles/total:gc-cycles", "/gc/heap/allocs:bytes",
	"/sched/latencies:seconds", "/sched/pauses/total/gc:seconds"}

func readRuntimeMetrics() runtimeSample {
	s := make([]metrics.Sample, len(runtimeNames))
	for i, n := range runtimeNames {
		s[i].Name = n
	}
	metrics.Read(s)
	r := runtimeSample{}
	if s[0].Value.Kind() == metrics.KindUint64 {
		r.gcCycles = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		r.allocBytes = s[1].Value.Uint64()
	}
	if s[2].Value.Kind() == metrics.KindFloat64Histogram {
		r.schedLat = s[2].Value.Float64Histogram()
	}
	if s[3].Value.Kind() == metrics.KindFloat64Histogram {
		r.gcPauses = s[3].Value.Float64Histogram()
	}
	return r
}

// since describes the window from b to r: GC cycles, bytes allocated,
// and the tail of goroutine scheduling latency (time runnable before
// running: a goroutine woken with every P busy waits here) and of GC
// stop-the-world pauses.
func (r runtimeSample) since(b runtimeSample) string {
	return fmt.Sprintf("%d GC cycles, %.1f MB allocated, goroutine sched latency p99.9 %s max %s (%d waits ≥ 1 ms), GC pauses max %s",
		r.gcCycles-b.gcCycles, float64(r.allocBytes-b.allocBytes)/1e6,
		histQuantile(r.schedLat, b.schedLat, 0.999), histQuantile(r.schedLat, b.schedLat, 1),
		histAbove(r.schedLat, b.schedLat, 1e-3), histQuantile(r.gcPauses, b.gcPauses, 1))
}

// histDelta returns the counts of a minus b (same buckets).
func histDelta(a, b *metrics.Float64Histogram) []uint64 {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) {
		return nil
	}
	d := make([]uint64, len(a.Counts))
	for i := range d {
		d[i] = a.Counts[i] - b.Counts[i]
	}
	return d
}

// histQuantile is the upper bound of the bucket holding quantile q of a−b.
func histQuantile(a, b *metrics.Float64Histogram, q float64) string {
	d := histDelta(a, b)
	var total uint64
	for _, n := range d {
		total += n
	}
	if total == 0 {
		return "-"
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, n := range d {
		seen += n
		if seen >= want {
			up := a.Buckets[i+1]
			if math.IsInf(up, 1) {
				up = a.Buckets[i]
			}
			return time.Duration(up * 1e9).String()
		}
	}
	return "-"
}

// histAbove counts the samples of a−b in buckets starting at or above v.
func histAbove(a, b *metrics.Float64Histogram, v float64) uint64 {
	d := histDelta(a, b)
	var n uint64
	for i, c := range d {
		if a.Buckets[i] >= v {
			n += c
		}
	}
	return n
}
