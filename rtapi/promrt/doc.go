// Package promrt exports gortapi's task and HAL thread statistics to
// Prometheus (github.com/prometheus/client_golang). It is its own package
// so that only programs that import it link the Prometheus client.
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(promrt.NewCollector(servo, base))   // *rtapi.Task
//	reg.MustRegister(promrt.NewHALCollector(h))          // *hal.HAL
//	http.Handle("/metrics", promrt.Handler(reg))           // one scrape at a time, 10 s each
//
// Handler bounds what scrapers cost the host: one scrape is gathered at a
// time (others get 503 at once) and each is cut off after ScrapeTimeout.
// Listen and NewServer bound the connections: one is open at a time (the
// rest wait in the kernel's queue, costing the host nothing) and a silent
// one is dropped after ReadHeaderTimeout, so that a flood cannot fill the
// Go scheduler's run queue that a woken task's goroutine waits in:
//
//	ln, err := promrt.Listen("127.0.0.1:9100")
//	...
//	go promrt.NewServer(reg).Serve(ln)
//
// Label values are made valid UTF-8; collecting never panics.
//
// Collecting never touches a task's real-time path: it reads the
// statistics the task publishes with atomic stores (rtapi.Task.StatsFolded,
// the HAL threads' seqlocked records), from the scraping goroutine. Each
// histogram is folded into 22 buckets in place, reading only the 1 µs
// buckets up to the highest in use: a scrape's cost follows the latencies
// seen, not HistogramBound (BenchmarkCollect measures one task).
//
// Metrics, each labelled task="NAME" (HAL: thread, funct):
//
//	gortapi_task_info{policy,priority,wake,degraded}         1
//	gortapi_task_cycles_total, _overruns_total, _wait_errors_total
//	gortapi_task_wakeup_latency_seconds                      histogram, log-scale buckets 1 µs .. 10 s
//	gortapi_task_exec_seconds                                histogram, same buckets
//	gortapi_task_interference_cycles_total{kind}             preempted, blocked, gc, faults
//	gortapi_task_late_wakeups_total{cause}                   blocked, preempted, gc, unexplained
//	gortapi_task_late_wakeups_all_total                      every late wake-up, whatever its cause
//	gortapi_task_late_threshold_seconds
//	gortapi_task_context_switches_total{kind}, gortapi_task_page_faults_total{kind}
//	gortapi_hal_thread_beat_total, _overruns_total, _time_seconds, _tmax_seconds
//	gortapi_hal_funct_calls_total, _overruns_total, _tmax_seconds
//
// Example (example_test.go) gathers a task's metrics on the sim flavor;
// examples/halhost -metrics-addr serves them over HTTP.
package promrt
