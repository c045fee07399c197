package main

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// The hour group runs an hour a side in one round unless -d or -rounds
// says otherwise; -smoke runs a second.
func TestParseHourDuration(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args   []string
		rounds int
		d      time.Duration
	}{
		{nil, 1, time.Hour},
		{[]string{"-d", "5s", "-only", "hour"}, 1, 5 * time.Second},
		{[]string{"-rounds", "3"}, 3, time.Hour},
		{[]string{"-smoke"}, 1, time.Second},
	} {
		s, err := parse(c.args, io.Discard)
		if err != nil || s.hourRounds != c.rounds || s.hourDuration != c.d {
			t.Errorf("%v: %v, hour group %d rounds of %v; want %d of %v", c.args, err, s.hourRounds, s.hourDuration, c.rounds, c.d)
		}
	}
}

// The host's .hal file loads on the three threads, puts the step pulses
// on base, the loop on servo and a siggen on user, and the axis follows.
func TestHourHALLoads(t *testing.T) {
	t.Parallel()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{ShmDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for i, task := range linuxcncSet {
		if _, err := h.NewThreadSpec(hal.ThreadSpec{Name: task.name, Period: task.period, Priority: rt.PrioHighest() - i}); err != nil {
			t.Fatal(err)
		}
	}
	cmds, err := halfile.Parse("hour.hal", strings.NewReader(hourHAL))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Load(io.Discard, cmds); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"base": 1, "servo": 4, "user": 1} {
		th, _ := h.Thread(name)
		if got := len(th.Functs()); got != want {
			t.Errorf("thread %s: %d functions, want %d", name, got, want)
		}
	}
	clock, err := sim.New(rt)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	// Half a second: siggen's 0.5 Hz sine of amplitude 2 peaks.
	if err := clock.Advance(500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	fb, err := h.GetS("pos-fb")
	if err != nil {
		t.Fatal(err)
	}
	pos, err := strconv.ParseFloat(fb, 64)
	moved := err == nil && pos > 1.5
	t.Logf("pos-fb = %s after half a second", fb)
	if !moved {
		t.Error("the stepper axis did not follow the sine to its peak: the loop is not wired")
	}
}

// A host stall in a slice where C had none counts; one C shares does
// not; slices compare within a round. One whose CPUs were stopped for at
// least half its latest wake-up, and 30 ms, is the host's.
func TestUnmatchedStalls(t *testing.T) {
	t.Parallel()
	run := func(over ...int64) runResult {
		r := runResult{}
		for _, n := range over {
			r.Minutes = append(r.Minutes, sliceFigures{Over20ms: n, Max: 100 * time.Millisecond})
		}
		return r
	}
	host := []runResult{run(0, 2, 1, 0), run(1)}
	c := []runResult{run(0, 0, 3, 1), run(0)}
	n, byHost, slices := unmatchedStalls(host, c)
	if n != 2 || byHost != 0 || slices != 5 {
		t.Fatalf("unmatched %d (%d the host's) of %d slices, want 2 (0) of 5", n, byHost, slices)
	}
	host[0].Minutes[1].Stopped = 60 * time.Millisecond // over half of 100 ms
	host[1].Minutes[0].Stopped = 40 * time.Millisecond // under half
	if n, byHost, _ = unmatchedStalls(host, c); n != 2 || byHost != 1 {
		t.Fatalf("unmatched %d (%d the host's), want 2 (1)", n, byHost)
	}
	for _, f := range []sliceFigures{
		{Over20ms: 1, Max: 25 * time.Millisecond, Stopped: 20 * time.Millisecond}, // under 30 ms: jitter
		{Over20ms: 0, Max: time.Millisecond, Stopped: time.Second},                // no stall
	} {
		if f.hostStall() {
			t.Errorf("%+v taken for the host's", f)
		}
	}
	if f := (sliceFigures{Over20ms: 1, Max: 25 * time.Millisecond, Stopped: 30 * time.Millisecond}); !f.hostStall() {
		t.Errorf("%+v not taken for the host's", f)
	}
}

// The goals read the max ratio and the slices of each thread; the report
// lists the slices with a stall.
func TestHourGoalsAndRender(t *testing.T) {
	t.Parallel()
	stall := []sliceFigures{{Count: 10, Max: 25 * time.Millisecond, Over20ms: 1, Stopped: 31 * time.Millisecond}, {Count: 10, Max: time.Millisecond}}
	quiet := []sliceFigures{{Count: 10, Max: 2 * time.Millisecond}, {Count: 10, Max: time.Millisecond}}
	g := groupResult{ID: "hour", Metric: "set"}
	for _, task := range linuxcncSet {
		hostMinutes := quiet
		if task.name == "servo" {
			hostMinutes = stall
		}
		g.Rows = append(g.Rows,
			rowResult{Name: rowHourHAL + " · " + task.name, Runs: []runResult{{Round: 1, Minutes: hostMinutes}}},
			rowResult{Name: rowHourC + " · " + task.name, External: true, Runs: []runResult{{Round: 1, Minutes: quiet}}})
		g.Ratios = append(g.Ratios, ratioResult{Label: "HAL host / C · " + task.name, Max: 1.2})
	}
	goals := hourGoals(results{Groups: []groupResult{g}})
	if len(goals) != 6 {
		t.Fatalf("goals %+v", goals)
	}
	for _, goal := range goals {
		wantMet := !strings.Contains(goal.Goal, "servo thread: slices")
		if goal.Met != wantMet || goal.Note != "" {
			t.Errorf("goal %+v: met %v, want %v", goal, goal.Met, wantMet)
		}
		if !wantMet && goal.Detail != "of 2; 1 with the CPUs stopped as long (the host)" {
			t.Errorf("goal %+v: detail", goal)
		}
	}
	table := stallSlices(g)
	if !strings.Contains(table, "| servo | 1 | 1 | 1, 25000.0; 31 | 0, 2000.0; 0 |") || strings.Contains(table, "| base |") {
		t.Errorf("stall table:\n%s", table)
	}
	g.Rows = g.Rows[:0]
	if !strings.Contains(stallSlices(g), "No slice") {
		t.Error("an empty group says no slice stalled")
	}
}

// The C side runs its processes slice after slice and keeps each slice's
// figures beside the whole histogram.
func TestRunCyclictestSlices(t *testing.T) {
	rttest.RequireRT(t)
	ct := rttest.RequireTool(t, "cyclictest", "apt-get install rt-tests")
	r, err := runCyclictestSlices(&tools{cyclictest: ct}, t.TempDir(), linuxcncSet, 2*time.Second, time.Second, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != 3 {
		t.Fatalf("tasks %+v", r.Tasks)
	}
	for i, task := range r.Tasks {
		if len(task.Minutes) != 2 || task.Latency.Count != task.Minutes[0].Count+task.Minutes[1].Count || task.Cycles != task.Latency.Count {
			t.Errorf("task %d (%s): %d samples, slices %+v", i, task.Name, task.Latency.Count, task.Minutes)
		}
	}
}

// The host child reports every slice of every thread.
func TestChildHALHostSlices(t *testing.T) {
	rttest.RequireRT(t)
	r := childResultOf(t, childSpec{Kind: "halhost", Flavor: "rt-preempt", CPU: -1, Threads: hourThreads(linuxcncSet),
		Priority: 80, Duration: 600 * time.Millisecond, HistBound: setHistBound, HAL: hourHAL, Slice: 200 * time.Millisecond})
	if len(r.Tasks) != 3 {
		t.Fatalf("tasks %+v", r.Tasks)
	}
	for _, task := range r.Tasks {
		var sum int64
		for _, m := range task.Minutes {
			sum += m.Count
		}
		if len(task.Minutes) != 3 || sum == 0 || sum > task.Latency.Count {
			t.Errorf("thread %s: %d samples, %d in slices %+v", task.Name, task.Latency.Count, sum, task.Minutes)
		}
	}
}

func TestFiguresOf(t *testing.T) {
	t.Parallel()
	h := hist.New(time.Microsecond, setHistBound)
	for range 999 {
		h.Record(10 * time.Microsecond)
	}
	h.Record(30 * time.Millisecond)
	f := figuresOf(h.Snapshot())
	if f.Count != 1000 || f.Over20ms != 1 || f.Max != 30*time.Millisecond || f.P99 > 20*time.Microsecond {
		t.Fatalf("figures %+v", f)
	}
}

// The report names each variant's rounds with the CPUs stopped for 30 ms
// or more, once per variant and round however many task rows it has.
func TestHostStops(t *testing.T) {
	t.Parallel()
	g := groupResult{Rows: []rowResult{
		{Name: "gortapi set · base", Runs: []runResult{{Round: 1}, {Round: 2, Stopped: 104 * time.Millisecond}}},
		{Name: "gortapi set · servo", Runs: []runResult{{Round: 1}, {Round: 2, Stopped: 104 * time.Millisecond}}},
		{Name: "C", Runs: []runResult{{Round: 1, Stopped: 29 * time.Millisecond}, {Round: 2, Stopped: 210 * time.Millisecond}}},
	}}
	want := "\nRounds in which the host stopped CPUs for 30 ms or more (time without a tick of CPUs busy without a break, summed over them):" +
		" gortapi set round 2, 104 ms; C round 2, 210 ms.\n"
	if got := hostStops(g); got != want {
		t.Errorf("hostStops:\n%q\nwant\n%q", got, want)
	}
	g.Rows = g.Rows[2:]
	g.Rows[0].Runs = g.Rows[0].Runs[:1]
	if got := hostStops(g); got != "" {
		t.Errorf("no stop of 30 ms: %q", got)
	}
}
