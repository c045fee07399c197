package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/ipc"
)

// childSpec is what the parent hands a child process (as JSON, its one
// argument in the role childRole of internal/reexec):
// each measurement runs in a fresh process, as cyclictest does, so that
// one run's heap, threads and timers cannot leak into the next.
type childSpec struct {
	Kind     string        `json:"kind"` // gortapi, ticker, switch, load, hal, halhost, scrapehost, scrapers
	Flavor   string        `json:"flavor"`
	Vanilla  bool          `json:"vanilla"`
	Wake     string        `json:"wake"`
	Priority int           `json:"priority"`
	CPU      int           `json:"cpu"` // -1: unpinned
	Interval time.Duration `json:"interval"`
	Duration time.Duration `json:"duration"`
	Loads    []string      `json:"loads"`
	Busy     time.Duration `json:"busy"`
	// Interference: "" (rtapi's default), "on" or "off".
	Interference string `json:"interference"`
	// Threads runs several tasks (latency.ParseThreads: "base=50us,servo=1ms"),
	// unpinned unless CPU is set, each reported in childResult.Tasks.
	Threads string `json:"threads,omitempty"`
	// ShieldOff runs the child with Options.RuntimeGuard Off.
	ShieldOff bool `json:"shield_off,omitempty"`
	// Sleeper runs an ordinary goroutine next to the tasks that sleeps
	// 100 µs in a loop; childResult.Sleep is how late each sleep ends.
	Sleeper bool `json:"sleeper,omitempty"`
	// SamplerPins: a hal child's sampler captures this many pins; 0 runs
	// no sampler (the sampler group).
	SamplerPins int `json:"sampler_pins,omitempty"`
	// SpinGuardOff runs the child with Options.RuntimeGuard Off
	// (one switch for the whole guard now).
	SpinGuardOff bool `json:"spin_guard_off,omitempty"`
	// SpareProcsOff runs the child with Options.RuntimeGuard Off
	// (one switch for the whole guard now).
	SpareProcsOff bool `json:"spare_procs_off,omitempty"`
	// HistBound is every task's latency histogram bound; 0 is rtapi's
	// default.
	HistBound time.Duration `json:"hist_bound,omitempty"`
	// Scrapers: a scrapehost child starts a scrapers child with this
	// many loops against its /metrics; a scrapers child runs them against
	// URL. BareServer serves through a plain http.Server (the scrape
	// group).
	Scrapers   int    `json:"scrapers,omitempty"`
	URL        string `json:"url,omitempty"`
	BareServer bool   `json:"bare_server,omitempty"`
	// HAL: a halhost child loads this .hal text (its threads exist)
	// instead of siggen on the slowest thread.
	HAL string `json:"hal,omitempty"`
	// Slice: a halhost child also reports each thread's figures over
	// every Slice of the run (taskResult.Minutes); 0: none.
	Slice time.Duration `json:"slice,omitempty"`
	// EmptyFuncts: a halhost child also adds this many empty functions
	// to each named thread, after the .hal's (the stepper25 group's
	// empty chain).
	EmptyFuncts map[string]int `json:"empty_functs,omitempty"`
	// Pins: a halhost child reports these pins' values at the end of
	// its run (childResult.Pins), as halcmd getp prints them.
	Pins []string `json:"pins,omitempty"`
}

// taskResult is one task of a multi-task child.
type taskResult struct {
	Name         string             `json:"name"`
	Period       time.Duration      `json:"period_ns"`
	Latency      hist.Snapshot      `json:"latency"`
	Cycles       int64              `json:"cycles"`
	Overruns     int64              `json:"overruns"`
	OwnP         string             `json:"own_p"`
	Interference rtapi.Interference `json:"interference"`
	// Minutes: the figures of each slice of the run (the hour group).
	Minutes []sliceFigures `json:"minutes,omitempty"`
}

// childResult is what a child prints on stdout.
type childResult struct {
	Latency hist.Snapshot `json:"latency"`
	Exec    hist.Snapshot `json:"exec"`
	Policy  string        `json:"policy"`
	Wake    string        `json:"wake"`
	Flavor  string        `json:"flavor"`
	Cycles  int64         `json:"cycles"`
	Note    string        `json:"note"`
	// Interference is rtapi's per-cycle account of what disturbed the
	// task (gortapi runs only).
	Interference *rtapi.Interference `json:"interference,omitempty"`
	// Overruns: releases the task skipped (gortapi) or, for a C tool, the
	// releases its histogram says it missed (missedReleases).
	Overruns int64 `json:"overruns"`
	// Tasks: every task of a Threads run.
	Tasks []taskResult `json:"tasks,omitempty"`
	// Sleep: the Sleeper goroutine's overshoot (Threads runs).
	Sleep *hist.Snapshot `json:"sleep,omitempty"`
	// Pins: the values of childSpec.Pins at the end of a halhost run.
	Pins map[string]string `json:"pins,omitempty"`
}

// runChild runs one measurement described by spec and writes its result.
func runChild(specJSON string, stdout io.Writer) error {
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fmt.Errorf("child spec: %w", err)
	}
	var loads []latency.Load
	for _, s := range spec.Loads {
		l, err := latency.ParseLoad(s)
		if err != nil {
			return err
		}
		loads = append(loads, l)
	}
	var res childResult
	var err error
	switch spec.Kind {
	case "gortapi":
		res, err = childGortapi(spec, loads)
	case "ticker":
		res, err = childTicker(spec)
	case "switch":
		res, err = childSwitch(spec)
	case "hal":
		res, err = childHAL(spec)
	case "halhost":
		res, err = childHALHost(spec)
	case "scrapehost":
		res, err = childScrapeHost(spec)
	case "scrapers":
		return childScrapers(spec, stdout) // its own output: counts, not a result
	case "load":
		// an external load: runs until the parent ends it
		l := latency.StartLoads(loads)
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		<-ctx.Done()
		stop()
		l.Stop()
		return nil
	default:
		return fmt.Errorf("unknown child kind %q", spec.Kind)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

// childGortapi is one servo task on rtapi, as latency-test runs it, or
// the task set of spec.Threads.
func childGortapi(spec childSpec, loads []latency.Load) (childResult, error) {
	wake, err := rtapi.ParseWakeMode(spec.Wake)
	if err != nil {
		return childResult{}, err
	}
	vanilla, guard := rtapi.Off, rtapi.Auto
	if spec.Vanilla {
		vanilla = rtapi.On
	}
	if spec.ShieldOff || spec.SpinGuardOff || spec.SpareProcsOff {
		guard = rtapi.Off // one switch now: Options.RuntimeGuard
	}
	defs := []latency.TaskDef{{Name: "servo", Period: spec.Interval}}
	if spec.Threads != "" {
		if defs, err = latency.ParseThreads(spec.Threads); err != nil {
			return childResult{}, err
		}
	}
	cfg := latency.Config{
		Options:  rtapi.Options{Flavor: spec.Flavor, VanillaFIFO: vanilla, RuntimeGuard: guard},
		Tasks:    defs,
		Priority: spec.Priority,
		Wake:     wake,
		Overrun:  rtapi.Skip, // cyclictest's rule, so the samples compare
		Body:     latency.Body{Busy: spec.Busy},
		Watchdog: -1, // a stall is a result to report, not a fault

		HistogramBound: spec.HistBound,
	}
	if spec.Interference != "" {
		if err := cfg.Interference.Set(spec.Interference); err != nil {
			return childResult{}, err
		}
	}
	if spec.CPU >= 0 {
		cfg.CPUs = []int{spec.CPU}
	}
	l := latency.StartLoads(loads)
	var sleep hist.Snapshot
	stopSleeper := func() {}
	if spec.Sleeper {
		stopSleeper = startSleeper(&sleep)
	}
	before := readRuntimeMetrics()
	stopTrace := startTrace(os.Getenv("LATENCY_BENCH_TRACE"))
	res, err := latency.Run(context.Background(), cfg, spec.Duration, 0, nil)
	stopTrace()
	runtimeView := readRuntimeMetrics().since(before)
	stopSleeper()
	l.Stop()
	if err != nil {
		return childResult{}, err
	}
	t := res.Tasks[0]
	r := childResult{Latency: t.Latency, Exec: t.Exec, Policy: t.Policy, Wake: t.Wake,
		Flavor: res.Flavor.Name, Cycles: t.Cycles, Note: t.Degraded, Overruns: t.Overruns}
	if len(loads) > 0 {
		// What the Go runtime did meanwhile (gcbench's runtime view):
		// the allocating process's GC, scheduling latency and pauses.
		r.Note = strings.TrimPrefix(r.Note+"; runtime: "+runtimeView, "; ")
	}
	if cfg.Interference != rtapi.Off {
		r.Interference = &t.Interference
	}
	if spec.Threads != "" {
		for _, t := range res.Tasks {
			r.Tasks = append(r.Tasks, taskResult{Name: t.Name, Period: t.Period, Latency: t.Latency, Cycles: t.Cycles,
				Overruns: t.Overruns, OwnP: t.OwnP, Interference: t.Interference})
		}
	}
	if spec.Sleeper {
		r.Sleep = &sleep
	}
	return r, nil
}

// startSleeper runs what the rest of a program does while real-time tasks
// run: an ordinary goroutine sleeping 100 µs in a loop. Each sleep's
// overshoot goes into the histogram snapshot *h when the returned stop is
// called.
func startSleeper(h *hist.Snapshot) (stop func()) {
	const nap = 100 * time.Microsecond
	over := hist.New(time.Microsecond, 100*time.Millisecond)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(nap) // the ordinary goroutine under test, by design
			over.Record(time.Since(t0) - nap)
		}
	}()
	return func() {
		close(quit)
		<-done
		*h = over.Snapshot()
	}
}

// childTicker is what a Go programmer writes first: a time.Ticker loop on
// an ordinary goroutine. Since Go 1.23 the time a tick carries is the time
// it was due (the runtime sends now − its own delay), so lateness is the
// receive time minus that; ticks the runtime dropped while the loop was
// late are skipped, as cyclictest skips missed periods.
func childTicker(spec childSpec) (childResult, error) {
	h := hist.New(time.Microsecond, 10*time.Millisecond)
	tick := time.NewTicker(spec.Interval) // the naive loop under test, by design
	defer tick.Stop()
	end := time.Now().Add(spec.Duration)
	var cycles int64
	for due := range tick.C {
		now := time.Now()
		if now.After(end) {
			break
		}
		h.Record(now.Sub(due))
		cycles++
	}
	return childResult{Latency: h.Snapshot(), Policy: "SCHED_OTHER", Wake: "time.Ticker", Flavor: "none", Cycles: cycles}, nil
}

// childSwitch ping-pongs two gortapi tasks through semaphores, as
// ptsematest does with a mutex: the sender, released every interval,
// stamps the time and gives the receiver's semaphore, then takes its own;
// the receiver records how long after the stamp it woke and gives back.
// Both run at the same priority on the same CPU.
func childSwitch(spec childSpec) (childResult, error) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: spec.Flavor})
	if err != nil {
		return childResult{}, err
	}
	defer rt.Close()
	var toReceiver, toSender ipc.Semaphore
	var stamp atomic.Int64
	h := hist.New(100*time.Nanosecond, 10*time.Millisecond)
	cpu := rtapi.Unpinned
	if spec.CPU >= 0 {
		cpu = rtapi.OnCPU(spec.CPU)
	}
	const patience = int64(100 * time.Millisecond)
	// As ptsematest: the receiver one priority above the sender, so that
	// the Give preempts the sender at once and the figure is the switch,
	// not the sender's own way into its wait.
	senderPrio := max(spec.Priority-1, 1)
	receiver, err := rt.NewTask(rtapi.TaskSpec{Name: "receiver", Priority: spec.Priority, CPU: cpu},
		func(tc *rtapi.TaskContext) error {
			for !tc.Stopping() {
				if toReceiver.TakeDeadline(tc.Now()+patience) != nil {
					continue
				}
				h.Record(time.Duration(tc.Now() - stamp.Load()))
				toSender.Give()
			}
			return nil
		})
	if err != nil {
		return childResult{}, err
	}
	sender, err := rt.NewTask(rtapi.TaskSpec{Name: "sender", Priority: senderPrio, CPU: cpu, Period: spec.Interval, Watchdog: -1},
		func(tc *rtapi.TaskContext) error {
			for tc.WaitPeriod() {
				stamp.Store(tc.Now())
				toReceiver.Give()
				toSender.TakeDeadline(tc.Now() + patience)
			}
			return nil
		})
	if err != nil {
		return childResult{}, err
	}
	if err := receiver.Start(); err != nil {
		return childResult{}, err
	}
	if err := sender.Start(); err != nil {
		return childResult{}, err
	}
	time.Sleep(spec.Duration) // the parent's clock, not a real-time path
	sender.Stop()
	receiver.Stop()
	sender.Wait()
	receiver.Wait()
	st, rs := sender.Stats(), receiver.Stats()
	return childResult{Latency: h.Snapshot(), Policy: st.Policy, Wake: st.Wake, Flavor: rt.Flavor().Name, Cycles: st.Cycles,
		Note: fmt.Sprintf("receiver priority %d, sender %d", rs.Priority, st.Priority)}, nil
}
