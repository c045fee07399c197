package main

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi/hist"
)

func TestCountOver(t *testing.T) {
	h := hist.New(time.Millisecond, 30*time.Millisecond)
	for _, d := range []time.Duration{time.Millisecond, 19 * time.Millisecond, 20 * time.Millisecond, 25 * time.Millisecond, time.Second} {
		h.Record(d)
	}
	if n, ok := countOver(h.Snapshot(), stallThreshold); !ok || n != 3 {
		t.Fatalf("countOver = %d, %v; want 3 (20 ms, 25 ms and the overflow)", n, ok)
	}
	short := hist.New(time.Microsecond, 10*time.Millisecond)
	short.Record(time.Second)
	if _, ok := countOver(short.Snapshot(), stallThreshold); ok {
		t.Fatal("a histogram bounded at 10 ms cannot tell wake-ups over 20 ms")
	}
}

// One round whose histogram cannot tell makes the row's count unknown,
// whatever the order.
func TestRecordOver20ms(t *testing.T) {
	long, short := hist.New(time.Millisecond, 50*time.Millisecond), hist.New(time.Millisecond, 10*time.Millisecond)
	long.Record(30 * time.Millisecond)
	long.Record(time.Millisecond)
	short.Record(5 * time.Millisecond)
	var row rowResult
	row.record(1, long.Snapshot(), childResult{}, 0)
	row.record(2, long.Snapshot(), childResult{}, 0)
	if row.Over20ms == nil || *row.Over20ms != 2 || row.WorstMax != 30*time.Millisecond {
		t.Fatalf("row %+v", row)
	}
	row.record(3, short.Snapshot(), childResult{}, 0)
	row.record(4, long.Snapshot(), childResult{}, 0)
	if row.Over20ms != nil {
		t.Fatalf("over 20 ms = %d after a round that cannot tell", *row.Over20ms)
	}
}

// The C reference is one cyclictest per task, as issue 19 gives it.
func TestCyclictestSetArgs(t *testing.T) {
	got := strings.Join(cyclictestSetArgs(threeSet[1], 15*time.Second, "/tmp/h", 1), " ")
	want := "-m -p 79 -i 550 -t 1 -h 50000 -q -D 15 --histfile=/tmp/h -a 1"
	if got != want {
		t.Fatalf("args %q, want %q", got, want)
	}
	if got := strings.Join(cyclictestSetArgs(threeSet[0], time.Second, "/tmp/h", -1), " "); strings.Contains(got, "-a") {
		t.Fatalf("unpinned: args %q", got)
	}
}

// Both sides of the set and hour groups run their threads on the same
// CPU: the real cyclictest thread's CPUs are the gortapi child's. Before,
// the gortapi tasks were unpinned while cyclictest 2 pinned its thread to
// CPU 0 without being asked.
func TestSetSidesShareACPU(t *testing.T) {
	rttest.RequireRT(t)
	ct := rttest.RequireTool(t, "cyclictest", "apt-get install rt-tests")
	k, err := kerneldetect.Detect()
	if err != nil || len(k.OnlineCPUs) == 0 {
		t.Fatalf("online CPUs: %v %+v", err, k)
	}
	cpu := k.OnlineCPUs[len(k.OnlineCPUs)-1]
	b := &bench{s: &settings{cpu: cpu, alloc: "200MB/s", setRounds: 1, setDuration: time.Second, hourRounds: 1,
		hourDuration: time.Second}, tools: &tools{cyclictest: ct}}
	cmd := exec.Command(ct, cyclictestSetArgs(threeSet[1], 2*time.Second, filepath.Join(t.TempDir(), "h"), b.s.cpu)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	cs := fifoThreadCPUs(t, cmd.Process.Pid)
	for _, spec := range []childSpec{b.setSpec(time.Second, false, false, nil), b.hourSpec()} {
		if !slices.Equal(cs, []int{spec.CPU}) {
			t.Errorf("%s child on CPU %d, its cyclictest thread on CPUs %v", spec.Kind, spec.CPU, cs)
		}
	}
	for _, g := range []group{setGroup(b), hourGroup(b)} {
		if !strings.Contains(g.desc, fmt.Sprintf("pinned to CPU %d", cpu)) {
			t.Errorf("%s: the description does not say where the threads run: %q", g.id, g.desc)
		}
	}
	if d := setPlacement(-1); !strings.Contains(d, "not placed alike") {
		t.Errorf("unpinned: %q", d)
	}
}

// fifoThreadCPUs waits for process pid's SCHED_FIFO thread and returns
// the CPUs it may run on.
func fifoThreadCPUs(t *testing.T, pid int) []int {
	t.Helper()
	for range 200 {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
		for _, task := range tasks {
			tid, err := strconv.Atoi(filepath.Base(task))
			if err != nil {
				continue
			}
			if p, _, err := sys.Scheduler(tid); err != nil || p != sys.SchedFIFO {
				continue
			}
			if cpus, err := sys.Affinity(tid); err == nil {
				return cpus
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d has no SCHED_FIFO thread", pid)
	return nil
}

// The set group runs 5 rounds of 15 s unless -rounds or -d says
// otherwise; -smoke runs one of a second.
func TestParseSetRounds(t *testing.T) {
	for _, c := range []struct {
		args   []string
		rounds int
		d      time.Duration
	}{
		{nil, 5, 15 * time.Second},
		{[]string{"-rounds", "2"}, 2, 15 * time.Second},
		{[]string{"-d", "3s"}, 5, 3 * time.Second},
		{[]string{"-rounds", "7", "-d", "20s", "-only", "set"}, 7, 20 * time.Second},
		{[]string{"-smoke", "-rounds", "7"}, 1, time.Second},
	} {
		s, err := parse(c.args, io.Discard)
		if err != nil || s.setRounds != c.rounds || s.setDuration != c.d {
			t.Errorf("%v: %v, set group %d rounds of %v; want %d of %v", c.args, err, s.setRounds, s.setDuration, c.rounds, c.d)
		}
	}
}

func TestSetGroupLayout(t *testing.T) {
	b := &bench{s: &settings{rounds: 3, duration: 10 * time.Second, interval: time.Millisecond, priority: 90, cpu: -1, alloc: "200MB/s",
		setRounds: 5, setDuration: 15 * time.Second}, tools: &tools{}}
	var set *group
	for _, g := range groups(b) {
		if g.id == "set" {
			set = &g
		}
	}
	if set == nil || !slices.Contains(groupIDs(), "set") {
		t.Fatal("no set group")
	}
	if set.rounds != 5 || !strings.Contains(set.desc, "5 rounds of 15s") {
		t.Errorf("set group: %d rounds, %q", set.rounds, set.desc)
	}
	var rows []string
	for _, v := range set.variants {
		for _, task := range v.tasks {
			rows = append(rows, v.name+" · "+task)
		}
		if v.external && !strings.Contains(v.skip, "cyclictest") {
			t.Errorf("%s: without cyclictest the C rows are skipped, got %q", v.name, v.skip)
		}
	}
	for _, want := range []string{"gortapi · 50µs", "gortapi +alloc · 550µs", "gortapi, spin guard off · 1050µs",
		"gortapi, spare Ps off · 550µs", "gortapi +alloc, spare Ps off · 1050µs",
		"cyclictest ×3 · 50µs", "gortapi HAL host · base", "cyclictest ×2 · servo"} {
		if !slices.Contains(rows, want) {
			t.Errorf("no row %q in %v", want, rows)
		}
	}
	for _, r := range set.ratios {
		if !slices.Contains(rows, r.num) || !slices.Contains(rows, r.den) {
			t.Errorf("ratio %q names a row that does not exist: %q / %q", r.label, r.num, r.den)
		}
	}
	if len(set.ratios) != 3*5+2 {
		t.Errorf("%d ratios", len(set.ratios))
	}

	// Pinned, the guard-off rows would livelock: the group leaves them out
	// and says why.
	b.s.cpu = 1
	pinned := setGroup(b)
	var names []string
	for _, v := range pinned.variants {
		names = append(names, v.name)
	}
	if !slices.Equal(names, []string{rowSetGortapi, rowSetCyclic, rowSetAlloc, rowHALGortapi, rowHALCyclictst}) {
		t.Errorf("pinned rows %q", names)
	}
	if len(pinned.ratios) != 3*2+2 || !strings.Contains(pinned.desc, "livelock") || !strings.Contains(pinned.desc, "pinned to CPU 1") {
		t.Errorf("pinned: %d ratios, %q", len(pinned.ratios), pinned.desc)
	}
	for _, r := range pinned.ratios {
		if !slices.Contains(names, strings.Split(r.num, " · ")[0]) && !strings.HasPrefix(r.num, rowHALGortapi) {
			t.Errorf("pinned ratio %q names a row left out", r.label)
		}
	}
	if got := threadsSpec(threeSet); got != "t0=50000ns,t1=550000ns,t2=1050000ns" {
		t.Errorf("threads %q", got)
	}
	if defs, err := latency.ParseThreads(threadsSpec(threeSet)); err != nil || defs[2].Period != 1050*time.Microsecond {
		t.Errorf("ParseThreads: %v %+v", err, defs)
	}
}

func TestSetGoalsAndRender(t *testing.T) {
	us := time.Microsecond
	over := func(n int64) *int64 { return &n }
	g := groupResult{ID: "set", Title: "Set", Metric: "set", Load: "none", Rounds: 5,
		Rows: []rowResult{
			{Name: "gortapi · 50µs", Median: latency.Summary{Count: 9, P99: 10 * us, P999: 20 * us, Max: 900 * us},
				P9999: 50 * us, WorstMax: 25 * time.Millisecond, Overruns: 7, Over20ms: over(1)},
			{Name: "cyclictest ×3 · 50µs", External: true, Median: latency.Summary{Count: 9, P99: 10 * us, P999: 20 * us, Max: 300 * us},
				WorstMax: 400 * us, Over20ms: over(0)},
			{Name: "gortapi +alloc · 50µs", Err: "child: boom"},
		},
		Ratios: []ratioResult{{Label: "gortapi / C · 50µs", P999: 1, Max: 3, WorstMax: 62.5}},
	}
	res := results{Rounds: 3, Groups: []groupResult{g}}
	res.Goals = goals(res)
	byName := map[string]goalResult{}
	for _, g := range res.Goals {
		byName[g.Goal] = g
	}
	if g := byName["set, gortapi, 50µs task: p99.9 ≤ 1.5 × C"]; !g.Met || g.Measured != 1 {
		t.Errorf("p99.9 goal %+v", g)
	}
	if g := byName["set, gortapi, 50µs task: max ≤ 1.5 × C"]; g.Met || g.Measured != 3 {
		t.Errorf("max goal %+v", g)
	}
	if g := byName["set, gortapi +alloc, 550µs task: max ≤ 1.5 × C"]; g.Note != "not measured" {
		t.Errorf("unmeasured goal %+v", g)
	}
	if g := byName["set: gortapi wake-ups later than 20 ms (goal 0: none)"]; g.Met || g.Measured != 1 || g.Detail != "C: 0" {
		t.Errorf("stall goal %+v", g)
	}
	md := renderMarkdown(res)
	for _, want := range []string{
		"Medians of **5 rounds** (this group's own).",
		"| gortapi · 50µs | 9 | 10.0 | 20.0 | 50.0 | 900.0 | 25000.0 | 7 | 1 |",
		"| cyclictest ×3 · 50µs | 9 | 10.0 | 20.0 | 0.0 | 300.0 | 400.0 | 0 | 0 |",
		"| set: gortapi wake-ups later than 20 ms (goal 0: none) | 1.00 wake-ups (C: 0) | no |",
		"| gortapi +alloc · 50µs | child: boom ||||||||",
		"| gortapi / C · 50µs | – | 1.00× | – | 3.00× | 62.50× | – |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// runCyclictestSet runs one real cyclictest per task and reads each
// histogram, bounded past 20 ms.
func TestRunCyclictestSet(t *testing.T) {
	rttest.RequireRT(t)
	ct := rttest.RequireTool(t, "cyclictest", "apt-get install rt-tests")
	r, err := runCyclictestSet(&tools{cyclictest: ct}, t.TempDir(), threeSet, time.Second, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != 3 {
		t.Fatalf("tasks %+v", r.Tasks)
	}
	for i, task := range r.Tasks {
		if task.Name != threeSet[i].name || task.Period != threeSet[i].period || task.Latency.Count == 0 {
			t.Errorf("task %d: %+v", i, task)
		}
		if _, ok := countOver(task.Latency, stallThreshold); !ok {
			t.Errorf("task %d: histogram of %d buckets cannot tell wake-ups over 20 ms", i, len(task.Latency.Counts))
		}
	}
	if r.Tasks[0].Latency.Count <= r.Tasks[2].Latency.Count {
		t.Errorf("the 50 µs process ran no more cycles than the 1050 µs one: %d vs %d", r.Tasks[0].Latency.Count, r.Tasks[2].Latency.Count)
	}
}

// The set's gortapi child: three tasks, spin guard off, histograms past
// 20 ms; the HAL host child: two HAL threads.
func TestChildSetAndHALHost(t *testing.T) {
	rttest.RequireRT(t)
	r := childResultOf(t, childSpec{Kind: "gortapi", Flavor: "rt-preempt", Wake: "nanosleep", CPU: -1, Threads: threadsSpec(threeSet),
		Priority: 80, Duration: 300 * time.Millisecond, HistBound: setHistBound, SpinGuardOff: true})
	if len(r.Tasks) != 3 || r.Policy != "SCHED_FIFO" {
		t.Fatalf("set child %+v", r)
	}
	for _, task := range r.Tasks {
		if _, ok := countOver(task.Latency, stallThreshold); !ok || task.Latency.Count == 0 {
			t.Errorf("task %s: %d samples, %d buckets", task.Name, task.Latency.Count, len(task.Latency.Counts))
		}
	}
	r = childResultOf(t, childSpec{Kind: "halhost", Flavor: "rt-preempt", CPU: -1, Threads: threadsSpec(halSet),
		Priority: 80, Duration: 300 * time.Millisecond, HistBound: setHistBound})
	// Each thread measured (how many cycles each got depends on the
	// machine's load: a 386 guest under TCG gave the 100 µs thread 84).
	if len(r.Tasks) != 2 || r.Tasks[1].Period != time.Millisecond || r.Tasks[0].Latency.Count == 0 || r.Tasks[1].Latency.Count == 0 {
		t.Fatalf("halhost child %+v", r.Tasks)
	}
	if r.Tasks[0].Interference.LateThreshold == 0 {
		t.Errorf("HAL thread without rtapi's late-wake-up account: %+v", r.Tasks[0].Interference)
	}
	if _, ok := countOver(r.Tasks[0].Latency, stallThreshold); !ok {
		t.Errorf("HAL thread histogram of %d buckets", len(r.Tasks[0].Latency.Counts))
	}
}

// runGroup honours a group's own rounds and carries each task's worst
// round and its wake-ups over 20 ms into the rows and ratios.
func TestRunGroupSetRows(t *testing.T) {
	calls := 0
	task := func(late ...time.Duration) func() (childResult, error) {
		return func() (childResult, error) {
			calls++
			h := hist.New(time.Microsecond, setHistBound)
			for _, l := range late {
				h.Record(l + time.Duration(calls)*time.Microsecond) // rounds differ
			}
			return childResult{Tasks: []taskResult{{Name: "t", Latency: h.Snapshot(), Overruns: 1}}}, nil
		}
	}
	b := &bench{s: &settings{rounds: 3}, log: io.Discard}
	g := b.runGroup(group{id: "set", metric: "set", rounds: 2,
		variants: []variant{
			{name: "go", tasks: []string{"t"}, run: task(10*time.Microsecond, 30*time.Millisecond)},
			{name: "c", tasks: []string{"t"}, external: true, run: task(10 * time.Microsecond)},
		},
		ratios: []ratioSpec{{"go / c · t", "go · t", "c · t"}}})
	if calls != 4 || g.Rounds != 2 || len(g.Rows) != 2 || len(g.Rows[0].Runs) != 2 {
		t.Fatalf("%d runs, rows %+v", calls, g.Rows)
	}
	goRow, cRow := g.Rows[0], g.Rows[1]
	if goRow.Name != "go · t" || goRow.Over20ms == nil || *goRow.Over20ms != 2 || goRow.Overruns != 2 ||
		goRow.WorstMax != 30*time.Millisecond+3*time.Microsecond {
		t.Errorf("go row %+v", goRow)
	}
	if cRow.Over20ms == nil || *cRow.Over20ms != 0 || cRow.WorstMax != 14*time.Microsecond {
		t.Errorf("c row %+v", cRow)
	}
	if len(g.Ratios) != 1 || g.Ratios[0].WorstMax != float64(goRow.WorstMax)/float64(cRow.WorstMax) {
		t.Errorf("ratios %+v", g.Ratios)
	}
}
