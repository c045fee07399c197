package main

import (
	"time"

	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/latencyfile"
)

// newJSONDoc builds the -json document: a latencyfile.Recording, so that
// users' sim tests can read it back with latencyfile.Read or
// latencyfile.ReadJitter.
func newJSONDoc(c *config, res latency.Result, started time.Time, interrupted bool) *latencyfile.Recording {
	doc := &latencyfile.Recording{
		Tool:        "gortapi latency-test",
		Started:     started.UTC(),
		Elapsed:     res.Elapsed,
		Interrupted: interrupted,
		Kernel:      res.Kernel,
		Flavor:      latencyfile.Flavor{Name: res.Flavor.Name, RealTime: res.Flavor.RealTime, Why: res.Flavor.Why},
		Settings: latencyfile.Settings{
			Duration:       c.duration,
			Priority:       c.lat.Priority,
			CPUs:           c.lat.CPUs,
			Wake:           c.lat.Wake.String(),
			Overrun:        c.lat.Overrun.String(),
			HistogramBound: c.lat.HistogramBound,
			GCShield:       c.lat.Options.RuntimeGuard.String(),
			Watchdog:       c.lat.Watchdog,
			VanillaFIFO:    c.lat.Options.VanillaFIFO == rtapi.On,
			BodyBusy:       c.lat.Body.Busy,
			Loads:          []string{},
		},
		Tasks: []latencyfile.Task{},
	}
	for _, l := range c.loads {
		doc.Settings.Loads = append(doc.Settings.Loads, l.String())
	}
	for _, t := range res.Tasks {
		doc.Tasks = append(doc.Tasks, latencyfile.Task{
			Name: t.Name, Tid: t.Tid, Period: t.Period,
			Policy: t.Policy, Priority: t.Priority, CPUs: t.CPUs, Wake: t.Wake, Degraded: t.Degraded,
			Cycles: t.Cycles, Overruns: t.Overruns, WaitErrors: t.WaitErrors,
			MaxJitter:   t.MaxJitter(),
			MinorFaults: t.MinorFaults, MajorFaults: t.MajorFaults,
			VoluntarySwitches: t.VoluntarySwitches, InvoluntarySwitches: t.InvoluntarySwitches,
			SpinBreaks:   t.SpinBreaks,
			Interference: t.Interference,
			Latency:      latencyfile.Series{Summary: latencyfile.Summarize(t.Latency), Histogram: t.Latency},
			Exec:         latencyfile.Series{Summary: latencyfile.Summarize(t.Exec), Histogram: t.Exec},
		})
	}
	return doc
}
