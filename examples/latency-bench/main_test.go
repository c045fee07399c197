package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hist"
)

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-d", "0"}, {"-d", "soon"}, {"-i", "5"}, {"-rounds", "0"}, {"-p", "99"}, {"-alloc", "lots"},
		{"-only", "quiet,nonsense"}, {"-nosuch"}, {"stray"}, {"-worst-d", "0"}, {"-worst-d", "later"}, {"-canary", "10us"},
	} {
		var stderr bytes.Buffer
		if code := run(args, io.Discard, &stderr); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		if strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: want one line on stderr, got %q", args, stderr.String())
		}
	}
}

func TestParseSmoke(t *testing.T) {
	s, err := parse([]string{"-smoke", "-only", "quiet,switch"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.rounds != 1 || s.duration != time.Second || len(s.only) != 2 {
		t.Fatalf("smoke settings %+v", s)
	}
}

// The raw JSON goes next to the document unless -json says otherwise.
func TestParseDocPutsJSONNextToIt(t *testing.T) {
	s, err := parse([]string{"-doc", "docs/BENCHMARKS.md"}, io.Discard)
	if err != nil || s.jsonFile != "docs/BENCHMARKS.json" || s.worst != 10*time.Minute {
		t.Fatalf("%v %+v", err, s)
	}
	s, err = parse([]string{"-doc", "docs/BENCHMARKS.md", "-json", "/tmp/x.json", "-worst-d", "2m"}, io.Discard)
	if err != nil || s.jsonFile != "/tmp/x.json" || s.worst != 2*time.Minute {
		t.Fatalf("%v %+v", err, s)
	}
}

// On a busy machine the document is not written without -force.
func TestRefusesDocOnBusyMachine(t *testing.T) {
	defer func(f func() loadAvg, settle, poll time.Duration) {
		readLoadAverage, loadSettle, loadPoll = f, settle, poll
	}(readLoadAverage, loadSettle, loadPoll)
	polls := 0
	readLoadAverage = func() loadAvg { polls++; return loadAvg{one: 3.5, five: 2, fifteen: 1, ok: true} }
	loadSettle, loadPoll = 30*time.Millisecond, 10*time.Millisecond
	doc := filepath.Join(t.TempDir(), "B.md")
	var stderr bytes.Buffer
	if code := run([]string{"-doc", doc, "-only", "vanilla"}, io.Discard, &stderr); code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr.String())
	}
	if !strings.Contains(stderr.String(), "3.50 2.00 1.00") || !strings.Contains(stderr.String(), "-force") {
		t.Errorf("stderr does not say why: %s", stderr.String())
	}
	if _, err := os.Stat(doc); !os.IsNotExist(err) {
		t.Errorf("the document was written: %v", err)
	}
	if polls < 2 {
		t.Errorf("did not wait for the load to settle (%d reads)", polls)
	}
	if (loadAvg{one: 0.9, ok: true}).busy() || (loadAvg{one: 9}).busy() || !(loadAvg{one: 1.1, ok: true}).busy() {
		t.Error("busy() is not load > 1")
	}
}

// A wake-up L late skips ⌊L / period⌋ releases; overflow counts as the
// bound.
func TestMissedReleases(t *testing.T) {
	h := hist.New(time.Microsecond, time.Millisecond)
	for _, l := range []time.Duration{10 * time.Microsecond, 49 * time.Microsecond, 50 * time.Microsecond,
		149 * time.Microsecond, 5 * time.Millisecond} {
		h.Record(time.Duration(l))
	}
	// 0 + 0 + 1 + 2 + 1000/50 (overflow at the 1 ms bound)
	if got := missedReleases(h.Snapshot(), 50*time.Microsecond); got != 23 {
		t.Fatalf("missed %d, want 23", got)
	}
	if missedReleases(h.Snapshot(), 0) != 0 {
		t.Fatal("no period, no estimate")
	}
}

func TestMedianSummary(t *testing.T) {
	ss := []latency.Summary{
		{Count: 10, P50: 5, P99: 50, Max: 900},
		{Count: 10, P50: 7, P99: 30, Max: 100},
		{Count: 10, P50: 6, P99: 40, Max: 200},
	}
	m := medianSummary(ss)
	if m.Count != 30 || m.P50 != 6 || m.P99 != 40 || m.Max != 200 {
		t.Fatalf("median %+v", m)
	}
	if m := medianSummary(ss[:2]); m.P50 != 6 || m.Max != 500 {
		t.Fatalf("even median %+v", m)
	}
	if m := medianSummary(nil); m != (latency.Summary{}) {
		t.Fatalf("empty median %+v", m)
	}
}

func TestRenderMarkdownAndGoals(t *testing.T) {
	us := time.Microsecond
	res := results{
		Rounds: 3, Duration: 10 * time.Second, Interval: time.Millisecond, Priority: 90, CPU: 1, RTTests: "2.40",
		Groups: []groupResult{{
			ID: "quiet", Title: "Quiet", Metric: "latency", Load: "none",
			Rows: []rowResult{
				{Name: rowGortapi, Policy: "SCHED_FIFO", Wake: "nanosleep", Median: latency.Summary{Count: 3, P50: 10 * us, P99: 21 * us, P999: 40 * us, Max: 90 * us}},
				{Name: rowCyclic, Median: latency.Summary{Count: 3, P50: 10 * us, P99: 20 * us, P999: 30 * us, Max: 80 * us}},
				{Name: rowTicker, Median: latency.Summary{Count: 3, P50: 500 * us, P99: 900 * us, P999: 2000 * us, Max: 9000 * us}},
			},
			Ratios: []ratioResult{
				{Label: "gortapi / cyclictest", P50: 1, P99: 1.05, P999: 1.33, Max: 1.1},
				{Label: "time.Ticker / gortapi", P50: 50},
			},
		}, {ID: "switch", Title: "Switch", Metric: "switch", Skipped: "needs SCHED_FIFO"}},
	}
	res.Goals = goals(res)
	if len(res.Goals) != 5 || !res.Goals[0].Met || res.Goals[1].Met || !res.Goals[2].Met ||
		res.Goals[3].Note != "not measured" || res.Goals[4].Note != "not measured" {
		t.Fatalf("goals %+v", res.Goals)
	}
	md := renderMarkdown(res)
	for _, want := range []string{"# gortapi benchmarks", "median of 3 rounds", "| quiet p99: gortapi ≤ 1.1 × cyclictest | 1.05× | yes |",
		"| quiet p99.9: gortapi ≤ 1.25 × cyclictest | 1.33× | no |", "| gortapi nanosleep | SCHED_FIFO | nanosleep | 3 |",
		"| gortapi / cyclictest | 1.00× | 1.05× | 1.33× | 1.10× |", "Skipped: needs SCHED_FIFO."} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func childResultOf(t *testing.T, spec childSpec) childResult {
	t.Helper()
	data, _ := json.Marshal(spec)
	var out bytes.Buffer
	if err := runChild(string(data), &out); err != nil {
		t.Fatal(err)
	}
	var r childResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("child output %q: %v", out.String(), err)
	}
	return r
}

func TestChildTicker(t *testing.T) {
	r := childResultOf(t, childSpec{Kind: "ticker", Interval: time.Millisecond, Duration: 300 * time.Millisecond, CPU: -1})
	if r.Cycles == 0 || r.Latency.Count != r.Cycles || r.Wake != "time.Ticker" {
		t.Fatalf("ticker result %+v", r)
	}
}

// A gortapi child with a load notes what the Go runtime did meanwhile,
// and writes LATENCY_BENCH_TRACE's execution trace of its run (what
// gcbench's -trace gave).
func TestChildGortapiPosix(t *testing.T) {
	traceFile := filepath.Join(t.TempDir(), "t.out")
	t.Setenv("LATENCY_BENCH_TRACE", traceFile)
	r := childResultOf(t, childSpec{Kind: "gortapi", Flavor: "posix", Wake: "auto", Interval: time.Millisecond,
		Duration: 300 * time.Millisecond, CPU: -1, Busy: 20 * time.Microsecond, Loads: []string{"cpu=1"}})
	if r.Flavor != "posix" || r.Latency.Count == 0 || r.Exec.Count == 0 || r.Policy != "SCHED_OTHER" {
		t.Fatalf("gortapi child %+v", r)
	}
	if !strings.Contains(r.Note, "runtime: ") || !strings.Contains(r.Note, "GC cycles") {
		t.Errorf("note %q lacks the runtime's view", r.Note)
	}
	if fi, err := os.Stat(traceFile); err != nil || fi.Size() == 0 {
		t.Errorf("no execution trace: %v", err)
	}
}

func TestChildSwitch(t *testing.T) {
	rttest.RequireRT(t)
	r := childResultOf(t, childSpec{Kind: "switch", Flavor: "rt-preempt", Priority: 50, Interval: time.Millisecond,
		Duration: 300 * time.Millisecond, CPU: 0})
	if r.Latency.Count == 0 || r.Policy != "SCHED_FIFO" {
		t.Fatalf("switch child %+v", r)
	}
	// ptsematest's arrangement: the receiver preempts the sender.
	if r.Note != "receiver priority 50, sender 49" {
		t.Errorf("switch child note %q, want the receiver one priority above the sender", r.Note)
	}
}

func TestChildBadSpec(t *testing.T) {
	for _, spec := range []string{"{", `{"kind":"teleport"}`, `{"kind":"gortapi","loads":["disk=1"]}`} {
		if err := runChild(spec, io.Discard); err == nil {
			t.Errorf("runChild(%s) succeeded", spec)
		}
	}
}

// TestSmoke builds the program and runs five groups in -smoke mode; CI
// runs the whole -smoke pass as its own step.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the benchmark; skipped with -short")
	}
	dir := t.TempDir()
	rttest.RequireGo(t)
	bin := filepath.Join(dir, "latency-bench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	jsonFile, doc := filepath.Join(dir, "r.json"), filepath.Join(dir, "B.md")
	cmd := exec.Command(bin, "-smoke", "-install=false", "-canary", "1ms", "-only", "vanilla,switch,multi,hour,stepper25", "-json", jsonFile, "-doc", doc)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("smoke: %v\n%s", err, stderr.String())
	}
	md, err := os.ReadFile(doc)
	if err != nil || !bytes.Equal(md, out) {
		t.Fatalf("-doc file differs from stdout (%v)", err)
	}
	for _, want := range []string{"Smoke run", "The vanilla flag", "Task switching", "Several tasks", "Load average at the start"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	var res results
	data, _ := os.ReadFile(jsonFile)
	if err := json.Unmarshal(data, &res); err != nil || len(res.Groups) != 5 || !res.Smoke || res.LoadBefore == "" {
		t.Fatalf("JSON results: %v %+v", err, res)
	}
	vanilla := res.Groups[0]
	if vanilla.ID != "vanilla" || len(vanilla.Rows) != 2 || vanilla.Rows[0].Median.Count == 0 {
		t.Fatalf("vanilla group %+v", vanilla)
	}
	multi, hour := res.Groups[2], res.Groups[3]
	if multi.Skipped != "" {
		return // no SCHED_FIFO here; RequireRT-style tests cover that case
	}
	// the stepper25 group: both chains' threads ran, and its goals are
	// reported
	stepper := res.Groups[4]
	for _, name := range []string{rowStepper + " · base", rowStepper + " · servo", rowStepperEmpty + " · base", rowStepperEmpty + " · servo"} {
		if r := findRow(stepper.Rows, name); stepper.ID != "stepper25" || r == nil || r.Median.Count == 0 {
			t.Errorf("stepper25 row %q missing or empty: %+v", name, stepper)
		}
	}
	if !strings.Contains(string(md), "stepper25, base thread: p99.9") {
		t.Errorf("report lacks the stepper25 goals")
	}
	// the hour group, for a second a side: each thread's figures, and
	// its one slice in the JSON
	if hour.ID != "hour" || !strings.Contains(hour.Load, "alloc=") {
		t.Fatalf("hour group %+v", hour)
	}
	for _, task := range linuxcncSet {
		r := findRow(hour.Rows, rowHourHAL+" · "+task.name)
		if r == nil || r.Median.Count == 0 || len(r.Runs) != 1 || len(r.Runs[0].Minutes) != 1 || r.Over20ms == nil {
			t.Errorf("hour row %s: %+v", task.name, r)
		}
	}
	// each multi variant reports its tasks and its ordinary goroutine
	want := []string{"3 tasks, default · base", "3 tasks, default · servo", "3 tasks, default · user",
		"3 tasks, default · " + sleeperRow}
	for _, name := range want {
		r := findRow(multi.Rows, name)
		if r == nil || r.Median.Count == 0 {
			t.Errorf("multi row %q missing or empty: %+v", name, multi.Rows)
		}
	}
	if r := findRow(multi.Rows, "3 tasks, default · base"); r != nil && r.OwnP != "yes" {
		t.Errorf("a task under the runtime guard holds a P of its own, and the report says so: %+v", r)
	}
	// -canary: with cyclictest at hand every round has its worst
	// wake-up per CPU, and the report lists them
	if _, err := exec.LookPath("cyclictest"); err != nil {
		if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.HasPrefix(n, "-canary") }) {
			t.Errorf("no cyclictest, and no note says the canary did not run: %q", res.Notes)
		}
		return
	}
	for _, g := range []groupResult{multi, hour} {
		for _, r := range g.Rows {
			for _, run := range r.Runs {
				if run.Err == "" && len(run.Canary) != runtime.NumCPU() {
					t.Errorf("%s round %d: canary maxima %v, want one per CPU", r.Name, run.Round, run.Canary)
				}
			}
		}
	}
	if !strings.Contains(string(md), "The canary's worst wake-up in each round") {
		t.Errorf("report lacks the canary's rounds")
	}
}

// Issue 13's goals read the multi, base20k, switch and worst groups.
func TestPerfGoals(t *testing.T) {
	us := time.Microsecond
	row := func(name string, p999 time.Duration, overruns, cycles int64) rowResult {
		return rowResult{Name: name, Median: latency.Summary{Count: 10, P99: p999 / 2, P999: p999}, Overruns: overruns, Cycles: cycles}
	}
	multi := groupResult{ID: "multi", Metric: "multi"}
	for _, task := range []string{"base", "servo", "user"} {
		multi.Rows = append(multi.Rows, row("alone: "+task+" · "+task, 100*us, 0, 10))
		for _, set := range []string{"3 tasks", "3 tasks +alloc"} {
			multi.Rows = append(multi.Rows, row(set+", default · "+task, 150*us, 4, 10), row(set+", shield off · "+task, 300*us, 9, 10))
		}
	}
	multi.Rows = append(multi.Rows, rowResult{Name: "3 tasks, default · " + sleeperRow, Median: latency.Summary{Count: 5, P99: 3 * time.Millisecond}})
	res := results{Groups: []groupResult{multi,
		{ID: "base20k", Rows: []rowResult{{Name: "gortapi 50µs", Overruns: 30}, {Name: "cyclictest -i 50", Overruns: 20}},
			Ratios: []ratioResult{{Label: "gortapi / cyclictest at 50 µs", P999: 1.2, Missed: 1.5}}},
		{ID: "worst", Ratios: []ratioResult{{Label: "gortapi +alloc / cyclictest quiet", Max: 2},
			{Label: rowWorstSet + " / C · 550µs", Max: 1.2}}},
	}}
	goals := perfGoals(res)
	if len(goals) != 3*2*2+1+2+1+3 {
		t.Fatalf("%d goals: %+v", len(goals), goals)
	}
	byName := map[string]goalResult{}
	for _, g := range goals {
		byName[g.Goal] = g
	}
	check := func(goal string, measured float64, met bool) {
		t.Helper()
		g, ok := byName[goal]
		if !ok || g.Met != met || (measured != 0 && g.Measured != measured) {
			t.Errorf("%s: %+v, want %v met=%v", goal, g, measured, met)
		}
	}
	check("3 tasks, base: overruns with the defaults ≤ shield off ((d+1)/(o+1))", 0.5, true)
	check("3 tasks +alloc, user: p99.9 with the defaults ≤ 2 × alone and quiet", 1.5, true)
	check("rest of the program: time.Sleep(100µs) overshoot p99 ≤ 2 ms next to the 3 tasks", 3, false)
	check("20 kHz: missed releases ≤ 1.5 × cyclictest -i 50", 1.5, true)
	check("20 kHz: p99.9 ≤ 1.25 × cyclictest -i 50", 1.2, true)
	check("worst case: max with 200 MB/s in-process ≤ 1.5 × quiet cyclictest", 2, false)
	check("worst case, set, 550µs task: max with 200 MB/s in-process ≤ 1.5 × quiet C", 1.2, true)
	if g := byName["worst case, set, 50µs task: max with 200 MB/s in-process ≤ 1.5 × quiet C"]; g.Met || g.Note != "not measured" {
		t.Errorf("a set task without its ratio: %+v, want not measured", g)
	}
	if md := renderMarkdown(results{Goals: goals}); !strings.Contains(md, "| 3 tasks, base: overruns with the defaults ≤ shield off ((d+1)/(o+1)) | 0.50× (4 vs 9) | yes |") {
		t.Errorf("goal rendering:\n%s", md)
	}
}
