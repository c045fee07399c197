package promrt_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/promrt"
)

// BenchmarkScrapeFlood measures a 1 kHz SCHED_FIFO task's wake-up latency
// while its process serves /metrics (promrt.Handler, 64 tasks with 1 s
// histograms) to no scraper and to 64 concurrent scrapers looping over
// loopback, side by side in one run. Each iteration is one period of the
// task; it reports the window's max-µs and p99-µs. Issue 20's bar: the
// max with the flood at most 1.25× the max without. The scrapers run in
// this process, so their own Go work (HTTP clients, GC) counts against
// the task too: an upper bound of what outside scrapers cost. Run it on a quiet
// machine, as root, under the test lock:
//
//	flock /tmp/gortapi-test.lock go test -run '^$' -bench ScrapeFlood -benchtime 15000x ./rtapi/promrt
func BenchmarkScrapeFlood(b *testing.B) {
	rttest.RequireRT(b)
	for _, scrapers := range []int{0, 64} {
		b.Run(fmt.Sprintf("scrapers=%d", scrapers), func(b *testing.B) { scrapeFlood(b, scrapers) })
	}
}

func scrapeFlood(b *testing.B, scrapers int) {
	rt, err := rtapi.Open(rtapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	c := promrt.NewCollector()
	idle := func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
		}
		return nil
	}
	servo, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond, HistogramBound: time.Second}, idle)
	if err != nil {
		b.Fatal(err)
	}
	c.Add(servo)
	for i := 1; i < 64; i++ { // exported, never started: only the scrape's cost
		t, err := rt.NewTask(rtapi.TaskSpec{Name: fmt.Sprintf("axis%d", i), Period: time.Millisecond, HistogramBound: time.Second}, idle)
		if err != nil {
			b.Fatal(err)
		}
		c.Add(t)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	srv := httptest.NewServer(promrt.Handler(reg))
	defer srv.Close()
	if err := servo.Start(); err != nil {
		b.Fatal(err)
	}
	defer servo.Stop()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var scrapes, served sync.Map // per scraper: attempts, 200s
	for i := 0; i < scrapers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n, ok int
			for {
				select {
				case <-stop:
					scrapes.Store(i, n)
					served.Store(i, ok)
					return
				default:
				}
				resp, err := http.Get(srv.URL)
				n++
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						ok++
					}
				}
			}
		}()
	}

	b.ResetTimer()
	mark := servo.Stats()
	for servo.Stats().Cycles-mark.Cycles < int64(b.N) {
		time.Sleep(10 * time.Millisecond)
	}
	window, err := servo.Stats().Since(mark)
	b.StopTimer()
	close(stop)
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	var total, ok int
	scrapes.Range(func(_, v any) bool { total += v.(int); return true })
	served.Range(func(_, v any) bool { ok += v.(int); return true })
	b.ReportMetric(float64(window.Latency.Max)/1e3, "max-µs")
	b.ReportMetric(float64(window.Latency.Percentile(0.99))/1e3, "p99-µs")
	b.ReportMetric(float64(total), "scrapes")
	b.ReportMetric(float64(ok), "served")
	b.ReportMetric(0, "ns/op")
}
