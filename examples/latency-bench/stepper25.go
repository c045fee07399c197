package main

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/internal/stepperhal"
)

// The stepper25 group (issue 41, part 7): a HAL host's 25 µs base thread
// running a stepper machine's components against the same threads with
// as many empty functions, alternating, so that the ratio is what the
// components cost in wake-up latency and missed releases.

// stepperSet is a stepper machine's threads: base 25 µs and servo 1 ms
// at the HAL groups' priorities (fastest highest).
var stepperSet = []setTask{{"base", 25 * time.Microsecond, 80}, {"servo", time.Millisecond, 79}}

// Row names of the stepper25 group.
const (
	rowStepper      = "HAL host, stepper"
	rowStepperEmpty = "HAL host, empty functions"
)

// stepperPins are the pins a stepper25 host reports at the end of its
// run: the stepgens' and encoders' counts show that the chain ran.
var stepperPins = []string{"stepgen.0.counts", "stepgen.1.counts", "stepgen.2.counts",
	"encoder.0.counts", "encoder.1.counts", "encoder.2.counts", "pwmgen.0.curr-dc"}

// stepperSpec is the stepper25 group's child: the stepper chain, or with
// empty as many empty functions in each thread, for d.
func stepperSpec(empty bool, d time.Duration) childSpec {
	spec := childSpec{Kind: "halhost", Flavor: "rt-preempt", CPU: -1, Threads: hourThreads(stepperSet),
		Priority: stepperSet[0].priority, Duration: d, HistBound: setHistBound}
	if empty {
		spec.EmptyFuncts = map[string]int{"base": stepperhal.BaseFuncts, "servo": stepperhal.ServoFuncts}
	} else {
		spec.HAL, spec.Pins = stepperhal.Base, stepperPins
	}
	return spec
}

// stepper25Group runs the stepper chain and the empty chain alternately,
// -rounds rounds of -d each.
func stepper25Group(b *bench) group {
	host := func(empty bool) func() (childResult, error) {
		return func() (childResult, error) { return b.childRaw(stepperSpec(empty, b.s.duration)) }
	}
	var ratios []ratioSpec
	for _, t := range stepperSet {
		ratios = append(ratios, ratioSpec{"stepper / empty · " + t.name, rowStepper + " · " + t.name, rowStepperEmpty + " · " + t.name})
	}
	return group{
		id: "stepper25", title: "A stepper machine's 25 µs base thread vs empty functions (issue 41)", metric: "set", needFIFO: true,
		desc: fmt.Sprintf("An rtapi/hal host (rt-preempt flavor, unpinned) with a 25 µs base thread and a 1 ms servo thread at "+
			"SCHED_FIFO priorities 80 and 79, running the stepper configuration of rtapi/hal/comps's BenchmarkBaseThreadStepper "+
			"(internal/stepperhal: on base stepgen.make-pulses with step_type=0,0,2, encoder.update-counters with 3 channels "+
			"looped back from the stepgens, pwmgen.make-pulses; on servo both capture-positions, stepgen.update-freq and "+
			"pwmgen.update), against the same threads with as many empty functions (%d and %d), alternating round by round. "+
			"Missed releases are the threads' overruns. %d rounds of %v (-rounds, -d).",
			stepperhal.BaseFuncts, stepperhal.ServoFuncts, b.s.rounds, b.s.duration),
		variants: []variant{
			{name: rowStepper, tasks: setNames(stepperSet), run: host(false)},
			{name: rowStepperEmpty, tasks: setNames(stepperSet), run: host(true)},
		},
		ratios: ratios,
	}
}

// stepper25Goals are issue 41's for the base thread: p99.9 and max at
// most 1.1 × the empty chain's, and missed releases (median over the
// rounds) no more than the empty chain's.
func stepper25Goals(res results) []goalResult {
	g := findGroup(res, "stepper25")
	if g == nil || g.Skipped != "" {
		return nil
	}
	var out []goalResult
	r := findRatio(g, "stepper / empty · base")
	for _, q := range []struct {
		name string
		v    func(*ratioResult) float64
	}{{"p99.9", func(r *ratioResult) float64 { return r.P999 }}, {"max", func(r *ratioResult) float64 { return r.Max }}} {
		goal := goalResult{Goal: "stepper25, base thread: " + q.name + " ≤ 1.1 × empty functions'", Limit: 1.1}
		if r == nil || q.v(r) == 0 {
			goal.Note = "not measured"
		} else {
			goal.Measured, goal.Met = q.v(r), q.v(r) <= 1.1
		}
		out = append(out, goal)
	}
	st, em := findRow(g.Rows, rowStepper+" · base"), findRow(g.Rows, rowStepperEmpty+" · base")
	goal := goalResult{Goal: "stepper25, base thread: missed releases (median over rounds) ≤ empty functions'", Unit: "releases"}
	if st == nil || em == nil || st.Median.Count == 0 || em.Median.Count == 0 {
		goal.Note = "not measured"
	} else {
		s, e := medianMissed(st.Runs), medianMissed(em.Runs)
		goal.Measured, goal.Limit, goal.Met = float64(s), float64(e), s <= e
		goal.Detail = fmt.Sprintf("empty: %d", e)
	}
	return append(out, goal)
}

// medianMissed is the median of the completed rounds' missed releases.
func medianMissed(runs []runResult) int64 {
	var v []int64
	for _, r := range runs {
		if r.Err == "" {
			v = append(v, r.Overruns)
		}
	}
	return median(v)
}
