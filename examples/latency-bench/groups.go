package main

import (
	"fmt"
	"time"
)

// group is one side-by-side comparison: variants run alternately under the
// same load, settings and CPU.
type group struct {
	id, title, desc string
	metric          string // latency, exec or switch
	needFIFO        bool
	load            func(b *bench) (*background, error)
	variants        []variant
	ratios          []ratioSpec
	rounds          int // 0: -rounds
}

type variant struct {
	name string
	skip string // why it cannot run here
	run  func() (childResult, error)
	// external: the row measures a C tool (cyclictest, ptsematest), whose
	// failures are reported but do not fail the benchmark.
	external bool
	// tasks: a multi-task variant reports one row per task, named
	// "variant · task"; sleeper adds the row of its ordinary goroutine.
	tasks   []string
	sleeper bool
}

type ratioSpec struct{ label, num, den string }

// Row names used in ratios and goals.
const (
	rowGortapi    = "gortapi nanosleep"
	rowTimerfd    = "gortapi timerfd"
	rowPosixTimer = "gortapi posix-timer"
	rowCyclic     = "cyclictest"
	rowCyclicX    = "cyclictest -x"
	rowTicker     = "Go time.Ticker"
	rowNoIntf     = "gortapi nanosleep, interference off"
)

func groupIDs() []string {
	return []string{"quiet", "stress", "alloc", "vanilla", "hrtimers", "switch", "multi", "base20k", "worst", "sampler", "set", "setcpu", "scrape", "hour", "stepper25"}
}

func groups(b *bench) []group {
	gortapi := func(spec childSpec) func() (childResult, error) {
		if spec.Flavor == "" {
			spec.Flavor = "rt-preempt"
		}
		if spec.Wake == "" {
			spec.Wake = "nanosleep"
		}
		spec.Kind = "gortapi"
		return func() (childResult, error) { return b.child(spec) }
	}
	cyclic := func(posixTimers bool) variant {
		name := rowCyclic
		if posixTimers {
			name = rowCyclicX
		}
		v := variant{name: name, external: true, run: func() (childResult, error) {
			return runCyclictest(b.tools, b.dir, b.s.priority, b.s.cpu, b.s.interval, b.s.duration, posixTimers)
		}}
		if b.tools.cyclictest == "" {
			v.skip = "cyclictest not installed"
		}
		return v
	}
	stress := func(b *bench) (*background, error) { return startStress(b.tools) }
	allocLoad := "alloc=" + b.s.alloc
	busy := 4 * time.Millisecond
	if b.s.smoke {
		busy = 500 * time.Microsecond
	}

	ptsema := variant{name: "ptsematest", external: true, run: func() (childResult, error) {
		return runPtsematest(b.tools, b.dir, b.s.priority, b.s.cpu, b.s.interval, b.s.duration)
	}}
	if b.tools.ptsematest == "" {
		ptsema.skip = "ptsematest not installed"
	}

	return append([]group{
		{
			id: "quiet", title: "Quiet machine: gortapi vs cyclictest, wake modes, time.Ticker", metric: "latency", needFIFO: true,
			desc: "One periodic thread, nothing else running. gortapi is the rt-preempt flavor (SCHED_FIFO, memory locked, " +
				"cpu_dma_latency 0) in a process of its own, as cyclictest is. cyclictest runs -m -p P -i I -a CPU -h 10000. " +
				"Wake modes: nanosleep is an absolute sleep to each release (cyclictest's default; gortapi waits on a futex with the same CLOCK_MONOTONIC hrtimer deadline, so Stop can end it), timerfd a periodic timerfd read, " +
				"posix-timer a periodic POSIX timer signalling the thread (cyclictest -x). Interference off drops rtapi's per-cycle " +
				"getrusage (Stats.Interference). The Ticker row is a plain " +
				"time.Ticker loop on an ordinary goroutine, unpinned, SCHED_OTHER: what a Go programmer writes first.",
			variants: []variant{
				{name: rowGortapi, run: gortapi(childSpec{})},
				cyclic(false),
				{name: rowNoIntf, run: gortapi(childSpec{Interference: "off"})},
				{name: rowTimerfd, run: gortapi(childSpec{Wake: "timerfd"})},
				{name: rowPosixTimer, run: gortapi(childSpec{Wake: "posix-timer"})},
				cyclic(true),
				{name: rowTicker, run: func() (childResult, error) { return b.child(childSpec{Kind: "ticker", CPU: -1}) }},
			},
			ratios: []ratioSpec{
				{"gortapi / cyclictest", rowGortapi, rowCyclic},
				{"interference off / cyclictest", rowNoIntf, rowCyclic},
				{"timerfd / nanosleep", rowTimerfd, rowGortapi},
				{"posix-timer / nanosleep", rowPosixTimer, rowGortapi},
				{"gortapi posix-timer / cyclictest -x", rowPosixTimer, rowCyclicX},
				{"time.Ticker / gortapi", rowTicker, rowGortapi},
			},
		},
		{
			id: "stress", title: "Under external load: gortapi vs cyclictest", metric: "latency", needFIFO: true, load: stress,
			desc:     "The same pair while stress-ng loads every CPU (CPU, memory and disk stressors) from another process.",
			variants: []variant{{name: rowGortapi, run: gortapi(childSpec{})}, cyclic(false)},
			ratios:   []ratioSpec{{"gortapi / cyclictest", rowGortapi, rowCyclic}},
		},
		{
			id: "alloc", title: "Allocation load: the Go-specific danger", metric: "latency", needFIFO: true,
			desc: fmt.Sprintf("An allocating goroutine (%s, a rolling working set so the GC has marking to do) in the "+
				"same process as the gortapi task, against the same load in a separate process next to gortapi and "+
				"next to cyclictest. The first row is what a Go servo program that also allocates gets.", allocLoad),
			variants: []variant{
				{name: "gortapi, alloc in-process", run: gortapi(childSpec{Loads: []string{allocLoad}})},
				{name: "gortapi, alloc in another process", run: b.withLoadChild([]string{allocLoad}, gortapi(childSpec{}))},
				withSkip(variant{name: "cyclictest, alloc in another process", external: true,
					run: b.withLoadChild([]string{allocLoad}, cyclic(false).run)}, cyclic(false).skip),
			},
			ratios: []ratioSpec{
				{"in-process / cyclictest", "gortapi, alloc in-process", "cyclictest, alloc in another process"},
				{"in-process / other process", "gortapi, alloc in-process", "gortapi, alloc in another process"},
			},
		},
		{
			id: "vanilla", title: "The vanilla flag: SCHED_OTHER vs SCHED_FIFO + POSIX timers on a non-RT kernel", metric: "latency", load: stress,
			desc: "The posix flavor on this (non-RT) kernel, without and with VanillaFIFO (-vanilla-fifo: SCHED_FIFO woken " +
				"by a periodic POSIX timer, Arvid Brodin's scheme), under an external load. " +
				"Without SCHED_FIFO permission the second row runs SCHED_OTHER too and says so.",
			variants: []variant{
				{name: "posix SCHED_OTHER", run: gortapi(childSpec{Flavor: "posix", Wake: "auto"})},
				{name: "posix -vanilla-fifo", run: gortapi(childSpec{Flavor: "posix", Vanilla: true, Wake: "auto"})},
			},
			ratios: []ratioSpec{{"SCHED_OTHER / SCHED_FIFO", "posix SCHED_OTHER", "posix -vanilla-fifo"}},
		},
		{
			id: "hrtimers", title: "Execution-time jitter of a busy task, with and without 100 hrtimer threads", metric: "exec", needFIFO: true,
			desc: fmt.Sprintf("A SCHED_FIFO task (%v period) whose body busy-waits %v each cycle, a calibrated "+
				"loop; the figure is the body's execution time as rtapi measures it (Stats.Exec). Loaded: 100 SCHED_OTHER "+
				"threads in another process sleeping 4 ms in clock_nanosleep on a common grid, so their timers expire "+
				"together (an hrtimer storm). The spike is max − p50, the spike above the typical execution time.", execJitterPeriod(busy), busy),
			variants: []variant{
				{name: "busy body, quiet", run: gortapi10ms(b, busy, nil)},
				{name: "busy body, 100 hrtimers", run: b.withLoadChild([]string{"hrtimers=100"}, gortapi10ms(b, busy, nil))},
			},
			ratios: []ratioSpec{{"100 hrtimers / quiet", "busy body, 100 hrtimers", "busy body, quiet"}},
		},
		{
			id: "switch", title: "Task switching: semaphore ping-pong vs ptsematest", metric: "switch", needFIFO: true,
			desc: "Two tasks on the same CPU, the receiver one priority above the sender, as ptsematest arranges its " +
				"threads: the sender, released every interval, stamps the time and gives the receiver's semaphore " +
				"(ipc.Semaphore, a futex semaphore), which preempts it; the figure is how long after the stamp the " +
				"receiver runs. ptsematest does the same with a pthread mutex and reports only min, avg and max.",
			variants: []variant{
				{name: "gortapi semaphore", run: func() (childResult, error) {
					return b.child(childSpec{Kind: "switch", Flavor: "rt-preempt"})
				}},
				ptsema,
			},
			ratios: []ratioSpec{{"gortapi / ptsematest", "gortapi semaphore", "ptsematest"}},
		},
	}, append(perfGroups(b, gortapi, cyclic), samplerGroup(b), setGroup(b), setCPUGroup(b), scrapeGroup(b), hourGroup(b), stepper25Group(b))...)
}

func withSkip(v variant, skip string) variant {
	v.skip = skip
	return v
}

// gortapi10ms is the execution-time group's measuring task: a 10 ms period and a busy body.
func gortapi10ms(b *bench, busy time.Duration, loads []string) func() (childResult, error) {
	return func() (childResult, error) {
		spec := childSpec{Kind: "gortapi", Flavor: "rt-preempt", Wake: "nanosleep", Busy: busy, Loads: loads}
		spec.Duration, spec.Priority, spec.CPU = b.s.duration, b.s.priority, b.s.cpu
		spec.Interval = execJitterPeriod(busy)
		return b.childRaw(spec)
	}
}

// execJitterPeriod leaves the busy body 40 % of each period or less.
func execJitterPeriod(busy time.Duration) time.Duration {
	if busy < time.Millisecond {
		return time.Millisecond
	}
	return 10 * time.Millisecond
}

// withLoadChild wraps a run with a load in a separate process.
func (b *bench) withLoadChild(loads []string, run func() (childResult, error)) func() (childResult, error) {
	return func() (childResult, error) {
		bg, err := startLoadChild(loads)
		if err != nil {
			return childResult{}, err
		}
		defer bg.stop()
		return run()
	}
}
