package main

import (
	"fmt"
	"io"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/promrt"
)

// serveMetrics serves h's threads, their tasks and their functions to
// Prometheus on addr (/metrics; promrt.Listen and NewServer) and says where. Scrapes read the
// lock-free snapshots: they never hold up a thread. Close the returned
// server to stop.
func serveMetrics(w io.Writer, addr string, h *hal.HAL) (*http.Server, error) {
	reg := prometheus.NewRegistry()
	tasks := promrt.NewCollector()
	for _, th := range h.Threads() {
		tasks.Add(th.Task())
	}
	reg.MustRegister(tasks, promrt.NewHALCollector(h))
	// One connection at a time, with timeouts: a scrape flood waits in
	// the kernel's queue instead of making HTTP goroutines that take
	// the Ps the HAL threads' goroutines wake up on.
	ln, err := promrt.Listen(addr)
	if err != nil {
		return nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	srv := promrt.NewServer(reg)
	go srv.Serve(ln)
	fmt.Fprintf(w, "halhost: Prometheus metrics on http://%s/metrics\n", ln.Addr())
	return srv, nil
}
