package main

import (
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/promrt"
)

// serveMetrics serves h's threads, their tasks and their functions to
// Prometheus on addr (/metrics) and says where. Scrapes read the
// lock-free snapshots: they never hold up a thread. Close the returned
// server to stop.
func serveMetrics(w io.Writer, addr string, h *hal.HAL) (*http.Server, error) {
	reg := prometheus.NewRegistry()
	tasks := promrt.NewCollector()
	for _, th := range h.Threads() {
		tasks.Add(th.Task())
	}
	reg.MustRegister(tasks, promrt.NewHALCollector(h))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promrt.Handler(reg))
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	fmt.Fprintf(w, "halhost: Prometheus metrics on http://%s/metrics\n", ln.Addr())
	return srv, nil
}
