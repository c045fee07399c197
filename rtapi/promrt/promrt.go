package promrt

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hist"
)

// Buckets are the upper bounds, in seconds, of the exported latency and
// execution-time histograms: 1, 2, 5 per decade from 1 µs to 10 s, whole
// microseconds so rtapi's 1 µs buckets fold into them exactly.
var Buckets = logBuckets()

// bucketBounds are Buckets as durations, for exact folding.
var bucketBounds = func() []time.Duration {
	d := make([]time.Duration, len(Buckets))
	for i, b := range Buckets {
		d[i] = time.Duration(math.Round(b * 1e9))
	}
	return d
}()

func logBuckets() []float64 {
	var b []float64
	for e := -6; e <= 1; e++ {
		for _, m := range []int{1, 2, 5} {
			// parsed, not multiplied: 5e-06, not 4.9999999999999996e-06
			if v, _ := strconv.ParseFloat(strconv.Itoa(m)+"e"+strconv.Itoa(e), 64); v <= 10 {
				b = append(b, v)
			}
		}
	}
	return b
}

var (
	taskInfo = prometheus.NewDesc("gortapi_task_info",
		"A task's scheduling: policy, priority, wake mode, and why it runs degraded (empty when it does not).",
		[]string{"task", "policy", "priority", "wake", "degraded"}, nil)
	taskCycles = prometheus.NewDesc("gortapi_task_cycles_total",
		"Releases the task's body has run.", []string{"task"}, nil)
	taskOverruns = prometheus.NewDesc("gortapi_task_overruns_total",
		"Releases missed because a body ran past its next release.", []string{"task"}, nil)
	taskWaitErrors = prometheus.NewDesc("gortapi_task_wait_errors_total",
		"Sleeps the kernel failed (should stay 0).", []string{"task"}, nil)
	taskLatency = prometheus.NewDesc("gortapi_task_wakeup_latency_seconds",
		"Wake-up latency: woken minus scheduled release, one sample per wake-up.", []string{"task"}, nil)
	taskExec = prometheus.NewDesc("gortapi_task_exec_seconds",
		"Execution time of the body, one sample per cycle.", []string{"task"}, nil)
	taskInterference = prometheus.NewDesc("gortapi_task_interference_cycles_total",
		"Cycles in which the task's thread was preempted, blocked (Go scheduler park), ran during GC marking, or took page faults.",
		[]string{"task", "kind"}, nil)
	taskLate = prometheus.NewDesc("gortapi_task_late_wakeups_total",
		"Wake-ups later than gortapi_task_late_threshold_seconds, by first cause; the total is gortapi_task_late_wakeups_all_total.",
		[]string{"task", "cause"}, nil)
	taskLateAll = prometheus.NewDesc("gortapi_task_late_wakeups_all_total",
		"Wake-ups later than gortapi_task_late_threshold_seconds, whatever their cause (on the sim flavor, the only late count).",
		[]string{"task"}, nil)
	taskLateThreshold = prometheus.NewDesc("gortapi_task_late_threshold_seconds",
		"Wake-up latency above which a wake-up counts as late.", []string{"task"}, nil)
	taskSwitches = prometheus.NewDesc("gortapi_task_context_switches_total",
		"Context switches of the task's thread (getrusage, sampled about every 100 ms).", []string{"task", "kind"}, nil)
	taskFaults = prometheus.NewDesc("gortapi_task_page_faults_total",
		"Page faults of the task's thread (getrusage, sampled about every 100 ms).", []string{"task", "kind"}, nil)
)

// Collector exports the statistics of rtapi tasks. It is safe for
// concurrent use; Collect never blocks a task.
type Collector struct {
	mu    sync.Mutex
	tasks []*rtapi.Task
}

// NewCollector returns a collector for tasks; Add adds more later.
func NewCollector(tasks ...*rtapi.Task) *Collector {
	c := &Collector{}
	for _, t := range tasks {
		c.Add(t)
	}
	return c
}

// Add exports t too. It panics on a nil task (a programmer error).
func (c *Collector) Add(t *rtapi.Task) {
	if t == nil {
		panic("promrt: Collector.Add of a nil task")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tasks = append(c.tasks, t)
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{taskInfo, taskCycles, taskOverruns, taskWaitErrors, taskLatency, taskExec,
		taskInterference, taskLate, taskLateAll, taskLateThreshold, taskSwitches, taskFaults} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one lock-free snapshot per task
// (rtapi.Task.StatsFolded).
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	tasks := append([]*rtapi.Task(nil), c.tasks...)
	c.mu.Unlock()
	for _, t := range tasks {
		s, latency, exec := t.StatsFolded(bucketBounds)
		collectTask(ch, s, latency, exec)
	}
}

// constMetric is prometheus.MustNewConstMetric that never panics: labels
// are made valid UTF-8, and a refusal becomes an invalid metric, which the
// registry reports as a scrape error.
func constMetric(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(d, t, v, labelValues(labels)...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

// labelValues replaces invalid UTF-8 in labels with U+FFFD, in place.
func labelValues(labels []string) []string {
	for i, l := range labels {
		if !utf8.ValidString(l) {
			labels[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
	}
	return labels
}

func collectTask(ch chan<- prometheus.Metric, s rtapi.Stats, latency, exec hist.Folded) {
	n := s.Name
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- constMetric(d, prometheus.GaugeValue, v, append([]string{n}, labels...)...)
	}
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- constMetric(d, prometheus.CounterValue, float64(v), append([]string{n}, labels...)...)
	}
	gauge(taskInfo, 1, s.Policy, strconv.Itoa(s.Priority), s.Wake, s.Degraded)
	counter(taskCycles, s.Cycles)
	counter(taskOverruns, s.Overruns)
	counter(taskWaitErrors, s.WaitErrors)
	ch <- histogram(taskLatency, n, latency)
	ch <- histogram(taskExec, n, exec)
	i := s.Interference
	counter(taskInterference, i.PreemptedCycles, "preempted")
	counter(taskInterference, i.BlockedCycles, "blocked")
	counter(taskInterference, i.GCCycles, "gc")
	counter(taskInterference, i.FaultCycles, "faults")
	counter(taskLateAll, i.Late)
	counter(taskLate, i.LateBlocked, "blocked")
	counter(taskLate, i.LatePreempted, "preempted")
	counter(taskLate, i.LateGC, "gc")
	counter(taskLate, i.LateUnexplained, "unexplained")
	gauge(taskLateThreshold, i.LateThreshold.Seconds())
	counter(taskSwitches, s.VoluntarySwitches, "voluntary")
	counter(taskSwitches, s.InvoluntarySwitches, "involuntary")
	counter(taskFaults, s.MinorFaults, "minor")
	counter(taskFaults, s.MajorFaults, "major")
}

// histogram exports h, folded at Buckets; its overflow counts only in +Inf.
func histogram(d *prometheus.Desc, task string, h hist.Folded) prometheus.Metric {
	cum := make(map[float64]uint64, len(Buckets))
	for i, b := range Buckets {
		cum[b] = h.Below[i]
	}
	m, err := prometheus.NewConstHistogram(d, uint64(h.Count), time.Duration(h.Sum).Seconds(), cum, labelValues([]string{task})...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

var (
	halBeat = prometheus.NewDesc("gortapi_hal_thread_beat_total",
		"Completed cycles of a HAL thread (thread-beat).", []string{"thread"}, nil)
	halOverruns = prometheus.NewDesc("gortapi_hal_thread_overruns_total",
		"Cycles whose chain ended after the next release.", []string{"thread"}, nil)
	halTime = prometheus.NewDesc("gortapi_hal_thread_time_seconds",
		"The last cycle's chain time (halcmd's thread .time).", []string{"thread"}, nil)
	halTMax = prometheus.NewDesc("gortapi_hal_thread_tmax_seconds",
		"The worst chain time so far (.tmax).", []string{"thread"}, nil)
	functCalls = prometheus.NewDesc("gortapi_hal_funct_calls_total",
		"Calls of a function on its thread.", []string{"thread", "funct"}, nil)
	functOverruns = prometheus.NewDesc("gortapi_hal_funct_overruns_total",
		"Calls that ended after the thread's next release.", []string{"thread", "funct"}, nil)
	functTMax = prometheus.NewDesc("gortapi_hal_funct_tmax_seconds",
		"A function's worst execution time so far.", []string{"thread", "funct"}, nil)
)

// HALCollector exports a HAL's thread and function statistics
// (hal.HAL.Stats), never blocking the threads; a Collector of each
// thread's Task exports its task figures.
type HALCollector struct{ h *hal.HAL }

// NewHALCollector returns a collector of h's threads. It panics on a nil h.
func NewHALCollector(h *hal.HAL) *HALCollector {
	if h == nil {
		panic("promrt: NewHALCollector of a nil HAL")
	}
	return &HALCollector{h: h}
}

// Describe implements prometheus.Collector.
func (c *HALCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{halBeat, halOverruns, halTime, halTMax, functCalls, functOverruns, functTMax} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *HALCollector) Collect(ch chan<- prometheus.Metric) {
	for _, th := range c.h.Stats() {
		ch <- constMetric(halBeat, prometheus.CounterValue, float64(th.Beat), th.Name)
		ch <- constMetric(halOverruns, prometheus.CounterValue, float64(th.Overruns), th.Name)
		ch <- constMetric(halTime, prometheus.GaugeValue, th.Time.Seconds(), th.Name)
		ch <- constMetric(halTMax, prometheus.GaugeValue, th.TMax.Seconds(), th.Name)
		for _, f := range th.Functs {
			ch <- constMetric(functCalls, prometheus.CounterValue, float64(f.Calls), th.Name, f.Name)
			ch <- constMetric(functOverruns, prometheus.CounterValue, float64(f.Overruns), th.Name, f.Name)
			ch <- constMetric(functTMax, prometheus.GaugeValue, f.TMax.Seconds(), th.Name, f.Name)
		}
	}
}
