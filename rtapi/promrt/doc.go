// Package promrt exports gortapi's task and HAL thread statistics to
// Prometheus (github.com/prometheus/client_golang). It is its own package
// so that only programs that import it link the Prometheus client.
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(promrt.NewCollector(servo, base))   // *rtapi.Task
//	reg.MustRegister(promrt.NewHALCollector(h))          // *hal.HAL
//	http.Handle("/metrics", promrt.Handler(reg))           // one scrape at a time, 10 s each
//
// Handler gathers one scrape at a time (others get 503) for at most
// ScrapeTimeout. Listen and NewServer keep one connection open at a time and
// drop a silent one, so a scrape flood cannot crowd a woken task's goroutine
// off the Go scheduler (docs/SECURITY.md, "How a scrape flood delays a
// task"):
//
//	ln, err := promrt.Listen("127.0.0.1:9100")
//	...
//	go promrt.NewServer(reg).Serve(ln)
//
// Collecting never panics or blocks a task: it reads what the tasks publish
// (rtapi.Task.StatsFolded, the HAL threads' seqlocked records), folding
// each histogram into Buckets in place, at a cost that follows the buckets
// in use, not HistogramBound. Label values are made valid UTF-8.
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
