package promrt

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
)

// statsCollector exports fixed task statistics through collectTask, as
// Collector does for a live task.
type statsCollector struct{ s rtapi.Stats }

func (c statsCollector) Describe(ch chan<- *prometheus.Desc) { NewCollector().Describe(ch) }
func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	fold := func(h hist.Snapshot) hist.Folded {
		f := hist.Folded{Upper: bucketBounds, Below: make([]uint64, len(Buckets)), Overflow: h.Overflow,
			Count: h.Count, Sum: h.Sum, Min: h.Min, Max: h.Max}
		for i, u := range bucketBounds {
			for j, n := range h.Counts {
				if time.Duration(j+1)*h.Width <= u {
					f.Below[i] += n
				}
			}
		}
		return f
	}
	collectTask(ch, c.s, fold(c.s.Latency), fold(c.s.Exec))
}

// A scrape of a task whose name (or any other label) is not valid UTF-8
// gives metrics with the bad bytes replaced; it does not panic. Before,
// MustNewConstMetric panicked inside the registry's Gather goroutine,
// where nothing recovers, and the host exited on the first scrape.
func TestScrapeTaskNamedInvalidUTF8(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(statsCollector{rtapi.Stats{Name: "axis\xff", Policy: "SCHED_FIFO\xfe", Degraded: "\xc3",
		Latency: hist.Snapshot{Width: 1000, Counts: []uint64{1, 2}, Count: 3, Sum: 4000}}})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "task" {
					found = true
					if l.GetValue() != "axis\uFFFD" {
						t.Errorf("%s: task label %q", f.GetName(), l.GetValue())
					}
				}
			}
		}
	}
	if !found {
		t.Fatal("no task label scraped")
	}
}

// A metric the client library refuses for another reason becomes a
// scrape error, not a panic.
func TestConstMetricNeverPanics(t *testing.T) {
	m := constMetric(taskCycles, prometheus.CounterValue, 1) // a label missing
	if _, ok := m.(interface{ Desc() *prometheus.Desc }); !ok {
		t.Fatal("no metric")
	}
	if err := m.Write(nil); err == nil {
		t.Error("an invalid metric writes without error")
	}
}
