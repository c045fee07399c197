package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/gortapi/gortapi/rtapi/hist"
)

// The groups of issue 13: several tasks under the default runtime guard, a
// 20 kHz base thread, and the worst case over long runs.

// Task sets of the multi group, LinuxCNC style.
const (
	threeTasks = "base=50us,servo=1ms,user=10ms"
	halTasks   = "base=100us,servo=1ms" // halhost's two HAL threads
	fourTasks  = "t1=100us,t2=500us,t3=1ms,t4=5ms"
	eightTasks = "t1=100us,t2=200us,t3=500us,t4=1ms,t5=2ms,t6=5ms,t7=10ms,t8=20ms"
)

// Row names of the worst group's set.
const (
	rowWorstSet  = "gortapi set +alloc in-process"
	rowWorstCSet = "cyclictest ×3 quiet"
)

// Row name suffix of a multi variant's ordinary goroutine.
const sleeperRow = "time.Sleep(100µs) overshoot"

func perfGroups(b *bench, gortapi func(childSpec) func() (childResult, error), cyclic func(bool) variant) []group {
	allocLoad := "alloc=" + b.s.alloc
	multi := func(name, threads string, shieldOff bool, loads []string) variant {
		defs := strings.Split(threads, ",")
		names := make([]string, len(defs))
		for i, d := range defs {
			names[i], _, _ = strings.Cut(d, "=")
		}
		return variant{name: name, tasks: names, sleeper: true,
			run: gortapi(childSpec{Threads: threads, ShieldOff: shieldOff, Loads: loads, CPU: -1, Sleeper: true})}
	}
	multiVariants := []variant{
		multi("alone: base", "base=50us", false, nil),
		multi("alone: servo", "servo=1ms", false, nil),
		multi("alone: user", "user=10ms", false, nil),
		multi("3 tasks, default", threeTasks, false, nil),
		multi("3 tasks, shield off", threeTasks, true, nil),
		multi("3 tasks +alloc, default", threeTasks, false, []string{allocLoad}),
		multi("3 tasks +alloc, shield off", threeTasks, true, []string{allocLoad}),
		multi("HAL-like, default", halTasks, false, nil),
		multi("HAL-like, shield off", halTasks, true, nil),
		multi("4 tasks, default", fourTasks, false, nil),
		multi("4 tasks, shield off", fourTasks, true, nil),
		multi("8 tasks, default", eightTasks, false, nil),
		multi("8 tasks, shield off", eightTasks, true, nil),
	}
	if b.s.smoke {
		multiVariants = multiVariants[3:5]
	}

	at := func(interval time.Duration, run func() (childResult, error)) func() (childResult, error) {
		return func() (childResult, error) {
			r, err := run()
			r.Overruns = missedReleases(r.Latency, interval)
			return r, err
		}
	}
	gortapiAt := func(interval time.Duration) func() (childResult, error) {
		return at(interval, func() (childResult, error) {
			spec := childSpec{Kind: "gortapi", Flavor: "rt-preempt", Wake: "nanosleep", Interval: interval,
				Duration: b.s.duration, Priority: b.s.priority, CPU: b.s.cpu}
			return b.childRaw(spec)
		})
	}
	cyclicAt := func(interval time.Duration) variant {
		v := cyclic(false)
		v.name = fmt.Sprintf("cyclictest -i %d", interval/time.Microsecond)
		v.run = at(interval, func() (childResult, error) {
			return runCyclictest(b.tools, b.dir, b.s.priority, b.s.cpu, interval, b.s.duration, false)
		})
		return v
	}
	base := []variant{
		{name: "gortapi 50µs", run: gortapiAt(50 * time.Microsecond)},
		cyclicAt(50 * time.Microsecond),
		{name: "gortapi 25µs", run: gortapiAt(25 * time.Microsecond)},
		cyclicAt(25 * time.Microsecond),
	}
	if b.s.smoke {
		base = base[:2]
	}

	worstGortapi := func() (childResult, error) {
		spec := childSpec{Kind: "gortapi", Flavor: "rt-preempt", Wake: "nanosleep", Interval: b.s.interval,
			Duration: b.s.worst, Priority: b.s.priority, CPU: b.s.cpu, Loads: []string{allocLoad}}
		return b.childRaw(spec)
	}
	worstCyclic := cyclic(false)
	worstCyclic.name = "cyclictest quiet"
	worstCyclic.run = func() (childResult, error) {
		return runCyclictest(b.tools, b.dir, b.s.priority, b.s.cpu, b.s.interval, b.s.worst, false)
	}
	// The set group's 3-task set over the same long runs (issue 19, goal 3).
	worstSet := variant{name: rowWorstSet, tasks: setNames(threeSet), run: b.gortapiSet(b.s.worst, false, false, []string{allocLoad})}
	worstCyclicSet := variant{name: rowWorstCSet, external: true, tasks: setNames(threeSet), skip: worstCyclic.skip,
		run: b.cyclictestSet(threeSet, b.s.worst)}
	worstRatios := []ratioSpec{{"gortapi +alloc / cyclictest quiet", "gortapi +alloc in-process", "cyclictest quiet"}}
	for _, t := range threeSet {
		worstRatios = append(worstRatios, ratioSpec{rowWorstSet + " / C · " + t.name, rowWorstSet + " · " + t.name, rowWorstCSet + " · " + t.name})
	}

	return []group{
		{
			id: "multi", title: "Several tasks under the default runtime guard", metric: "multi", needFIFO: true,
			desc: "Task sets on the rt-preempt flavor, unpinned, rate-monotonic priorities from P down, as " +
				"`latency-test -threads` runs them: each task alone; base 50 µs + servo 1 ms + user 10 ms, quiet and with " +
				allocLoad + " allocating in the same process; halhost's two HAL threads (base 100 µs, servo 1 ms); 4 and 8 " +
				"tasks. Each with the defaults (the runtime guard: a P per task, one P left for the rest) and with RTAPI_RUNTIME_GUARD=off. An ordinary goroutine in the same process sleeps 100 µs in a loop: its overshoot " +
				"is what the rest of the program gets. Overruns are releases skipped (Skip policy), summed over the rounds.",
			variants: multiVariants,
		},
		{
			id: "base20k", title: "Base thread at 20 kHz and 40 kHz: gortapi vs cyclictest", metric: "missed", needFIFO: true,
			desc: "One empty task at 50 µs and 25 µs periods, pinned, vs cyclictest -i 50 / -i 25 with the same priority " +
				"and CPU. Missed releases come from the histogram for both, as both skip them: a wake-up L late skips " +
				"⌊L / period⌋ releases (a sample past the 10 ms bound counts as 10 ms).",
			variants: base,
			ratios: []ratioSpec{
				{"gortapi / cyclictest at 50 µs", "gortapi 50µs", "cyclictest -i 50"},
				{"gortapi / cyclictest at 25 µs", "gortapi 25µs", "cyclictest -i 25"},
			},
		},
		{
			id: "worst", title: "The worst case: long runs, gortapi with allocation vs quiet cyclictest", metric: "set", needFIFO: true,
			desc: fmt.Sprintf("Runs of %v (-worst-d), alternating: gortapi (defaults) with %s allocating in its own "+
				"process vs cyclictest with nothing else running; then the set group's 3 tasks (50, 550, 1050 µs, "+
				"priorities 80, 79, 78; %s) with the same allocation vs three quiet cyclictest processes. "+
				"The figures are the maximum and p99.99.", b.s.worst, allocLoad, setPlacement(b.s.cpu)),
			variants: []variant{{name: "gortapi +alloc in-process", run: worstGortapi}, worstCyclic, worstSet, worstCyclicSet},
			ratios:   worstRatios,
		},
	}
}

// missedReleases estimates from a latency histogram how many releases a
// thread that skips missed ones (cyclictest, gortapi with Skip) skipped: a
// wake-up L late skips ⌊L / period⌋ of them; a sample past the histogram's
// bound counts as the bound.
func missedReleases(h hist.Snapshot, period time.Duration) int64 {
	if period <= 0 {
		return 0
	}
	var n int64
	for i, c := range h.Counts {
		lat := time.Duration(i) * h.Width
		n += int64(c) * int64(lat/period)
	}
	bound := time.Duration(len(h.Counts)) * h.Width
	n += int64(h.Overflow) * int64(bound/period)
	return n
}

// perfGoals are issue 13's targets, checked against the medians.
func perfGoals(res results) []goalResult {
	var out []goalResult
	add := func(goal string, measured, limit float64, ok bool, unit, detail string) {
		g := goalResult{Goal: goal, Limit: limit, Unit: unit, Detail: detail}
		if !ok {
			g.Note = "not measured"
		} else {
			g.Measured, g.Met = measured, measured <= limit
		}
		out = append(out, g)
	}
	if g := findGroup(res, "multi"); g != nil {
		for _, load := range []string{"3 tasks", "3 tasks +alloc"} {
			for _, task := range []string{"base", "servo", "user"} {
				def := findRow(g.Rows, load+", default · "+task)
				off := findRow(g.Rows, load+", shield off · "+task)
				ok := def != nil && off != nil && def.Cycles > 0 && off.Cycles > 0
				var m float64
				var detail string
				if ok {
					m = float64(def.Overruns+1) / float64(off.Overruns+1)
					detail = fmt.Sprintf("%d vs %d", def.Overruns, off.Overruns)
				}
				add(fmt.Sprintf("%s, %s: overruns with the defaults ≤ shield off ((d+1)/(o+1))", load, task), m, 1, ok, "", detail)
				alone := findRow(g.Rows, "alone: "+task+" · "+task)
				ok = def != nil && alone != nil && def.Median.Count > 0 && alone.Median.Count > 0
				if ok {
					m = ratio(def.Median.P999, alone.Median.P999)
					detail = fmt.Sprintf("%s vs %s µs", us(def.Median.P999), us(alone.Median.P999))
				}
				add(fmt.Sprintf("%s, %s: p99.9 with the defaults ≤ 2 × alone and quiet", load, task), m, 2, ok, "", detail)
			}
		}
		s := findRow(g.Rows, "3 tasks, default · "+sleeperRow)
		ok := s != nil && s.Median.Count > 0
		var m float64
		if ok {
			m = float64(s.Median.P99) / float64(time.Millisecond)
		}
		add("rest of the program: time.Sleep(100µs) overshoot p99 ≤ 2 ms next to the 3 tasks", m, 2, ok, "ms", "")
	}
	if g := findGroup(res, "base20k"); g != nil {
		r := findRatio(g, "gortapi / cyclictest at 50 µs")
		var missed, p999 float64
		detail := ""
		if r != nil {
			missed, p999 = r.Missed, r.P999
			gr, cr := findRow(g.Rows, "gortapi 50µs"), findRow(g.Rows, "cyclictest -i 50")
			detail = fmt.Sprintf("%d vs %d", gr.Overruns, cr.Overruns)
		}
		add("20 kHz: missed releases ≤ 1.5 × cyclictest -i 50", missed, 1.5, r != nil && r.Missed > 0, "", detail)
		add("20 kHz: p99.9 ≤ 1.25 × cyclictest -i 50", p999, 1.25, r != nil, "", "")
	}
	if g := findGroup(res, "sampler"); g != nil { // issue 23
		r := findRatio(g, "sampler / no sampler")
		var p999 float64
		if r != nil {
			p999 = r.P999
		}
		add("20 kHz HAL thread: p99.9 with a sampler of 16 pins ≤ 1.1 × without", p999, 1.1, r != nil, "", "")
	}
	if g := findGroup(res, "switch"); g != nil {
		r := findRatio(g, "gortapi / ptsematest")
		var avg, mx float64
		if r != nil {
			avg, mx = r.Avg, r.Max
		}
		add("task switch: avg ≤ 1.5 × ptsematest", avg, 1.5, r != nil, "", "")
		add("task switch: max ≤ 3 × ptsematest", mx, 3, r != nil, "", "")
	}
	if g := findGroup(res, "worst"); g != nil {
		r := findRatio(g, "gortapi +alloc / cyclictest quiet")
		var mx float64
		if r != nil {
			mx = r.Max
		}
		add("worst case: max with 200 MB/s in-process ≤ 1.5 × quiet cyclictest", mx, 1.5, r != nil, "", "")
		for _, t := range threeSet {
			r := findRatio(g, rowWorstSet+" / C · "+t.name)
			var mx float64
			if r != nil {
				mx = r.Max
			}
			add(fmt.Sprintf("worst case, set, %s task: max with 200 MB/s in-process ≤ 1.5 × quiet C", t.name), mx, 1.5, r != nil && r.Max > 0, "", "")
		}
	}
	return append(append(append(append(out, setGoals(res)...), scrapeGoals(res)...), hourGoals(res)...), stepper25Goals(res)...)
}
