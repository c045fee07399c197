package main

import (
	"time"

	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
)

// jsonDoc is the -json document. Durations are integer nanoseconds
// (fields ending _ns); histograms have 1 µs buckets from 0.
type jsonDoc struct {
	Tool        string               `json:"tool"`
	Started     time.Time            `json:"started"`
	ElapsedNS   int64                `json:"elapsed_ns"`
	Interrupted bool                 `json:"interrupted"`
	Kernel      *kerneldetect.Report `json:"kernel"`
	Flavor      jsonFlavor           `json:"flavor"`
	Settings    jsonSettings         `json:"settings"`
	Tasks       []jsonTask           `json:"tasks"`
}

type jsonFlavor struct {
	Name     string `json:"name"`
	RealTime bool   `json:"realtime"`
	Why      string `json:"why"`
}

type jsonSettings struct {
	DurationNS       int64    `json:"duration_ns"`
	Priority         int      `json:"priority"`
	CPUs             []int    `json:"cpus"`
	Wake             string   `json:"wake"`
	Overrun          string   `json:"overrun"`
	HistogramBoundNS int64    `json:"histogram_bound_ns"`
	RawSleep         bool     `json:"raw_sleep"`
	WatchdogNS       int64    `json:"watchdog_ns"`
	VanillaFIFO      bool     `json:"vanilla_fifo"`
	BodyBusyNS       int64    `json:"body_busy_ns"`
	Loads            []string `json:"loads"`
}

type jsonTask struct {
	Name                string             `json:"name"`
	Tid                 int                `json:"tid"`
	PeriodNS            int64              `json:"period_ns"`
	Policy              string             `json:"policy"`
	Priority            int                `json:"priority"`
	CPUs                []int              `json:"cpus"`
	Wake                string             `json:"wake"`
	Degraded            string             `json:"degraded"`
	Cycles              int64              `json:"cycles"`
	Overruns            int64              `json:"overruns"`
	WaitErrors          int64              `json:"wait_errors"`
	MaxJitterNS         int64              `json:"max_jitter_ns"`
	MinorFaults         int64              `json:"minor_faults"`
	MajorFaults         int64              `json:"major_faults"`
	VoluntarySwitches   int64              `json:"voluntary_switches"`
	InvoluntarySwitches int64              `json:"involuntary_switches"`
	Interference        rtapi.Interference `json:"interference"`
	Latency             jsonSeries         `json:"latency"`
	Exec                jsonSeries         `json:"exec"`
}

type jsonSeries struct {
	Summary   latency.Summary `json:"summary"`
	Histogram rtapi.Histogram `json:"histogram"`
}

func newJSONDoc(c *config, res latency.Result, started time.Time, interrupted bool) jsonDoc {
	doc := jsonDoc{
		Tool:        "gortapi latency-test",
		Started:     started.UTC(),
		ElapsedNS:   int64(res.Elapsed),
		Interrupted: interrupted,
		Kernel:      res.Kernel,
		Flavor:      jsonFlavor{Name: res.Flavor.Name, RealTime: res.Flavor.RealTime, Why: res.Flavor.Why},
		Settings: jsonSettings{
			DurationNS:       int64(c.duration),
			Priority:         c.lat.Priority,
			CPUs:             c.lat.CPUs,
			Wake:             c.lat.Wake.String(),
			Overrun:          c.lat.Overrun.String(),
			HistogramBoundNS: int64(c.lat.HistogramBound),
			RawSleep:         c.lat.RawSleep,
			WatchdogNS:       int64(c.lat.Watchdog),
			VanillaFIFO:      c.lat.Options.VanillaFIFO,
			BodyBusyNS:       int64(c.lat.Body.Busy),
			Loads:            []string{},
		},
		Tasks: []jsonTask{},
	}
	for _, l := range c.loads {
		doc.Settings.Loads = append(doc.Settings.Loads, l.String())
	}
	for _, t := range res.Tasks {
		doc.Tasks = append(doc.Tasks, jsonTask{
			Name: t.Name, Tid: t.Tid, PeriodNS: int64(t.Period),
			Policy: t.Policy, Priority: t.Priority, CPUs: t.CPUs, Wake: t.Wake, Degraded: t.Degraded,
			Cycles: t.Cycles, Overruns: t.Overruns, WaitErrors: t.WaitErrors,
			MaxJitterNS: int64(t.MaxJitter()),
			MinorFaults: t.MinorFaults, MajorFaults: t.MajorFaults,
			VoluntarySwitches: t.VoluntarySwitches, InvoluntarySwitches: t.InvoluntarySwitches,
			Interference: t.Interference,
			Latency:      jsonSeries{Summary: latency.Summarize(t.Latency), Histogram: t.Latency},
			Exec:         jsonSeries{Summary: latency.Summarize(t.Exec), Histogram: t.Exec},
		})
	}
	return doc
}
