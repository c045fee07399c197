package promrt_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gortapi/gortapi/rtapi/promrt"
)

// blockingCollector holds every Collect until released, counting them.
type blockingCollector struct {
	mu      sync.Mutex
	started int
	entered chan struct{}
	release chan struct{}
}

func (g *blockingCollector) Describe(chan<- *prometheus.Desc) {}

func (g *blockingCollector) Collect(chan<- prometheus.Metric) {
	g.mu.Lock()
	g.started++
	g.mu.Unlock()
	g.entered <- struct{}{}
	<-g.release
}

// While one scrape is being gathered, others are refused at once with 503
// and gather nothing: a scrape flood costs the host one scrape at a time.
// promhttp.HandlerOpts{} (what halhost served) gathers every one of them
// concurrently.
func TestHandlerLimitsScrapesInFlight(t *testing.T) {
	g := &blockingCollector{entered: make(chan struct{}, 64), release: make(chan struct{})}
	reg := prometheus.NewRegistry()
	reg.MustRegister(g)
	h := promrt.Handler(reg)
	first := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		first <- rec.Code
	}()
	<-g.entered
	for range 64 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("a scrape beyond the limit got %d", rec.Code)
		}
	}
	close(g.release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("the first scrape got %d", code)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started != 1 {
		t.Errorf("%d gathers ran, want 1", g.started)
	}
}
