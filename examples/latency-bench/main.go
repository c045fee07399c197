package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/examples/internal/outfile"
	"github.com/gortapi/gortapi/internal/reexec"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi/hist"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// histBoundUS is every latency histogram's bound (cyclictest -h).
const histBoundUS = 10000

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// settings are the command line.
type settings struct {
	smoke    bool
	rounds   int
	duration time.Duration
	interval time.Duration
	priority int
	cpu      int
	alloc    string
	jsonFile string
	docFile  string
	only     []string
	install  bool
	worst    time.Duration // length of each run of the worst group
	force    bool          // write -doc even on a busy machine
	// setRounds and setDuration are the set group's: 5 rounds of 15 s
	// (issue 19) unless -rounds or -d says otherwise.
	setRounds   int
	setDuration time.Duration
	// hourRounds and hourDuration are the hour group's: 1 round of an
	// hour unless -rounds or -d says otherwise.
	hourRounds   int
	hourDuration time.Duration
	// canary is the canary's period (canary.go); 0: no canary.
	canary time.Duration
}

func parse(args []string, stderr io.Writer) (*settings, error) {
	fs := flag.NewFlagSet("latency-bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is reported once, by run
	cli.Usage(fs, "[-only GROUPS] [-rounds N] [-d D] [-doc FILE] [-json FILE] [-smoke] [flags]",
		"go doc ./examples/latency-bench describes the groups and their goals.")
	s := &settings{}
	fs.BoolVar(&s.smoke, "smoke", false, "run each mode once for about a second (CI smoke test; no timing verdict)")
	fs.IntVar(&s.rounds, "rounds", 3, "rounds of each comparison (medians are reported)")
	dur := fs.String("d", "10s", "duration of each run")
	interval := fs.String("i", "1000", "period of the measuring task: µs or a duration")
	fs.IntVar(&s.priority, "p", 90, "SCHED_FIFO priority of every measuring thread (gortapi and rt-tests)")
	fs.IntVar(&s.cpu, "cpu", -2, "CPU every measuring thread is pinned to (-1: unpinned; default: the highest online CPU)")
	fs.StringVar(&s.alloc, "alloc", "200MB/s", "rate of the in-process allocation load")
	fs.StringVar(&s.jsonFile, "json", "latency-bench.json", "write the results as JSON to `FILE`")
	fs.StringVar(&s.docFile, "doc", "", "regenerate this Markdown file (docs/BENCHMARKS.md) from the results")
	only := fs.String("only", "", "comma-separated groups to run (default all): "+strings.Join(groupIDs(), ","))
	fs.BoolVar(&s.install, "install", true, "install rt-tests and stress-ng with apt-get when missing (root only)")
	worst := fs.String("worst-d", "10m", "duration of each run of the worst group")
	fs.BoolVar(&s.force, "force", false, "write -doc even when the load average is above 1")
	canaryEvery := fs.String("canary", "0", "run a cyclictest thread at SCHED_FIFO 99 on every CPU with this period (µs or a duration; 0: none) through each round, and keep its worst wake-up per CPU")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.Usage()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if s.duration, err = latency.ParseRunDuration(*dur); err != nil || s.duration < time.Second {
		return nil, fmt.Errorf("-d: want at least 1s, got %q", *dur)
	}
	if s.interval, err = latency.ParseMicros(*interval); err != nil || s.interval < 10*time.Microsecond {
		return nil, fmt.Errorf("-i: want an interval of at least 10µs, got %q", *interval)
	}
	if s.rounds < 1 || s.rounds > 100 {
		return nil, fmt.Errorf("-rounds: want 1 to 100, got %d", s.rounds)
	}
	if s.priority < 1 || s.priority > 98 {
		return nil, fmt.Errorf("-p: want a priority in [1, 98], got %d", s.priority)
	}
	if _, err := latency.ParseLoad("alloc=" + s.alloc); err != nil {
		return nil, fmt.Errorf("-alloc: %v", err)
	}
	if *only != "" {
		for _, id := range strings.Split(*only, ",") {
			if !slices.Contains(groupIDs(), id) {
				return nil, fmt.Errorf("-only: unknown group %q (valid: %s)", id, strings.Join(groupIDs(), ", "))
			}
			s.only = append(s.only, id)
		}
	}
	if s.worst, err = latency.ParseRunDuration(*worst); err != nil || s.worst < time.Second {
		return nil, fmt.Errorf("-worst-d: want at least 1s, got %q", *worst)
	}
	if *canaryEvery != "0" {
		if s.canary, err = latency.ParseMicros(*canaryEvery); err != nil || s.canary != 0 && (s.canary < 100*time.Microsecond || s.canary > time.Second) {
			return nil, fmt.Errorf("-canary: want 0 or a period from 100µs to 1s, got %q", *canaryEvery)
		}
	}
	jsonSet := false
	fs.Visit(func(f *flag.Flag) { jsonSet = jsonSet || f.Name == "json" })
	if s.docFile != "" && !jsonSet {
		// the raw results live next to the document they produced
		s.jsonFile = strings.TrimSuffix(s.docFile, filepath.Ext(s.docFile)) + ".json"
	}
	s.setRounds, s.setDuration = 5, 15*time.Second
	s.hourRounds, s.hourDuration = 1, time.Hour
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "rounds":
			s.setRounds, s.hourRounds = s.rounds, s.rounds
		case "d":
			s.setDuration, s.hourDuration = s.duration, s.duration
		}
	})
	if s.smoke {
		s.rounds, s.duration, s.worst = 1, time.Second, time.Second
		s.setRounds, s.setDuration = 1, time.Second
		s.hourRounds, s.hourDuration = 1, time.Second
	}
	return s, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	if reexec.Role() == childRole {
		if len(args) != 1 {
			fmt.Fprintf(stderr, "latency-bench child: want one argument, the measurement as JSON; got %d\n", len(args))
			return exitUsage
		}
		if err := runChild(args[0], stdout); err != nil {
			fmt.Fprintf(stderr, "latency-bench child: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	s, err := parse(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "latency-bench: %v\n", err)
		return exitUsage
	}
	load := readLoadAverage()
	fmt.Fprintf(stderr, "latency-bench: load average %s; CPU %s\n", load, cpuModel())
	if s.docFile != "" && !s.force && !s.smoke && load.busy() {
		// a build just before (go run) raises the 1-minute figure: let it settle
		fmt.Fprintf(stderr, "latency-bench: waiting up to %v for the load average to fall below 1\n", loadSettle)
		for deadline := time.Now().Add(loadSettle); load.busy() && time.Now().Before(deadline); load = readLoadAverage() {
			time.Sleep(loadPoll)
		}
	}
	if s.docFile != "" && !s.force && !s.smoke && load.busy() {
		fmt.Fprintf(stderr, "latency-bench: the load average is %s, above 1: figures taken now are noise; "+
			"refusing to write %s (stop what runs, or pass -force)\n", load, s.docFile)
		return exitUsage
	}
	b, err := newBench(s, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "latency-bench: %v\n", err)
		return exitFailure
	}
	b.loadBefore = load
	defer os.RemoveAll(b.dir)
	res := b.runAll()
	code := exitOK
	if err := writeJSON(s.jsonFile, res); err != nil {
		fmt.Fprintf(stderr, "latency-bench: -json: %v\n", err)
		code = exitFailure
	}
	report := renderMarkdown(res)
	if s.docFile != "" {
		if err := writeDoc(s.docFile, report); err != nil {
			fmt.Fprintf(stderr, "latency-bench: -doc: %v\n", err)
			code = exitFailure
		}
	}
	io.WriteString(stdout, report)
	for _, g := range res.Groups {
		for _, r := range g.Rows {
			if r.Err != "" && !r.External && !strings.HasPrefix(r.Err, "skipped:") {
				fmt.Fprintf(stderr, "latency-bench: %s / %s failed: %s\n", g.ID, r.Name, r.Err)
				code = exitFailure
			}
		}
	}
	return code
}

func writeJSON(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteFile(name, append(data, '\n'), 0o644)
}

// writeDoc writes -doc's file: the Markdown report. Like -json's, a
// symlink at name is replaced, not followed (examples/internal/outfile).
func writeDoc(name, report string) error {
	return outfile.WriteFile(name, []byte(report), 0o644)
}

// bench is one benchmark run.
type bench struct {
	s      *settings
	tools  *tools
	dir    string
	fifo   bool // SCHED_FIFO can be set
	kernel *kerneldetect.Report
	log    io.Writer

	loadBefore loadAvg
}

func newBench(s *settings, log io.Writer) (*bench, error) {
	dir, err := os.MkdirTemp("", "latency-bench")
	if err != nil {
		return nil, err
	}
	k, err := kerneldetect.Detect()
	if err != nil {
		return nil, fmt.Errorf("detect kernel: %w", err)
	}
	if s.cpu < -2 {
		return nil, fmt.Errorf("-cpu %d: want a CPU number, or -1 for unpinned", s.cpu)
	}
	if s.cpu == -2 {
		s.cpu = -1
		if len(k.OnlineCPUs) > 1 {
			s.cpu = k.OnlineCPUs[len(k.OnlineCPUs)-1]
		}
	}
	b := &bench{s: s, dir: dir, kernel: k, log: log, fifo: sys.ProbeSchedFIFO() == nil}
	b.tools = findTools(s.install, b.logf)
	return b, nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "latency-bench: "+format+"\n", args...)
}

// child runs one measurement in a fresh process of this program, with
// the benchmark's duration, interval, priority and CPU.
func (b *bench) child(spec childSpec) (childResult, error) {
	spec.Duration, spec.Interval, spec.Priority = b.s.duration, b.s.interval, b.s.priority
	if spec.CPU == 0 {
		spec.CPU = b.s.cpu
	}
	return b.childRaw(spec)
}

// childRaw runs spec as given.
func (b *bench) childRaw(spec childSpec) (childResult, error) {
	data, _ := json.Marshal(spec)
	out, err := measure(max(b.s.duration, spec.Duration), string(data))
	if err != nil {
		return childResult{}, fmt.Errorf("%s child: %w: %s", spec.Kind, err, lastLine(out))
	}
	var r childResult
	// the result is the last line; rtapi may have logged before it
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		return childResult{}, fmt.Errorf("%s child result: %w", spec.Kind, err)
	}
	return r, nil
}

// Result types, also the JSON file's layout. Durations in nanoseconds.
type results struct {
	Tool       string        `json:"tool"`
	Started    time.Time     `json:"started"`
	Finished   time.Time     `json:"finished"`
	Smoke      bool          `json:"smoke"`
	GoVersion  string        `json:"go_version"`
	Kernel     string        `json:"kernel"`
	KernelKind string        `json:"kernel_kind"`
	Preempt    string        `json:"preempt"`
	CPUs       int           `json:"cpus"`
	CPUModel   string        `json:"cpu_model"`
	RTTests    string        `json:"rt_tests_version"`
	Rounds     int           `json:"rounds"`
	Duration   time.Duration `json:"run_duration_ns"`
	Interval   time.Duration `json:"interval_ns"`
	Priority   int           `json:"priority"`
	CPU        int           `json:"cpu"`
	WorstRun   time.Duration `json:"worst_run_ns"`
	LoadBefore string        `json:"load_average_before"`
	LoadAfter  string        `json:"load_average_after"`
	Notes      []string      `json:"notes"`
	Groups     []groupResult `json:"groups"`
	Goals      []goalResult  `json:"goals"`
}

type groupResult struct {
	ID      string        `json:"id"`
	Title   string        `json:"title"`
	Desc    string        `json:"description"`
	Metric  string        `json:"metric"` // latency, exec, switch
	Load    string        `json:"load"`
	Skipped string        `json:"skipped,omitempty"`
	Rounds  int           `json:"rounds"` // the medians' rounds: -rounds, or the group's own
	Rows    []rowResult   `json:"rows"`
	Ratios  []ratioResult `json:"ratios"`
}

type rowResult struct {
	Name     string          `json:"name"`
	External bool            `json:"external"` // a C tool's row
	Policy   string          `json:"policy"`
	Wake     string          `json:"wake"`
	Runs     []runResult     `json:"runs"`
	Median   latency.Summary `json:"median"`
	Err      string          `json:"error,omitempty"`
	Note     string          `json:"note,omitempty"`
	// Late sums rtapi's late wake-ups over the rounds, by first cause
	// (gortapi rows only).
	Late *lateCauses `json:"late,omitempty"`
	// Overruns and Cycles are summed over the rounds: releases skipped
	// (multi, base20k: from the histogram) and releases run.
	Overruns int64 `json:"overruns"`
	Cycles   int64 `json:"cycles"`
	// P9999 is the median over the rounds of p99.99 (worst group).
	P9999 time.Duration `json:"p99_99_ns,omitempty"`
	// OwnP is the task's Stats.OwnP in the last round (multi).
	OwnP string `json:"own_p,omitempty"`
	// WorstMax is the largest max of any round.
	WorstMax time.Duration `json:"worst_max_ns"`
	// Over20ms sums over the rounds the wake-ups later than 20 ms (issue
	// 19's goal 0); nil when a round's histogram does not reach past it.
	Over20ms    *int64 `json:"over_20ms,omitempty"`
	overUnknown bool
}

type lateCauses struct {
	Threshold   time.Duration `json:"threshold_ns"`
	Samples     int64         `json:"samples"`
	Late        int64         `json:"late"`
	Blocked     int64         `json:"blocked"`
	Preempted   int64         `json:"preempted"`
	GC          int64         `json:"gc"`
	Unexplained int64         `json:"unexplained"`
}

type runResult struct {
	Round    int             `json:"round"`
	Summary  latency.Summary `json:"summary"`
	Overruns int64           `json:"overruns"`
	P9999    time.Duration   `json:"p99_99_ns,omitempty"`
	Err      string          `json:"error,omitempty"`
	// Minutes: the task's figures slice by slice (the hour group).
	Minutes []sliceFigures `json:"minutes,omitempty"`
	// Stopped: how long the machine's CPUs, busy without a break, took no tick during the
	// round's run, summed over the CPUs (stopMeter).
	Stopped time.Duration `json:"cpus_stopped_ns"`
	// Canary: the canary's worst wake-up on each CPU during the round's
	// run (-canary; canary.go), CPU 0 first.
	Canary []time.Duration `json:"canary_max_ns,omitempty"`
}

type ratioResult struct {
	Label string  `json:"label"`
	Num   string  `json:"numerator"`
	Den   string  `json:"denominator"`
	Min   float64 `json:"min"`
	Avg   float64 `json:"avg"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
	// Jitter is the ratio of (max − p50), the spike above the typical
	// value, for execution-time rows (the spike above the average).
	Jitter float64 `json:"jitter"`
	// P9999 and Missed: ratios of p99.99 and of missed releases.
	P9999  float64 `json:"p99_99"`
	Missed float64 `json:"missed"`
	// WorstMax: ratio of the worst round's max of each side.
	WorstMax float64 `json:"worst_max"`
}

type goalResult struct {
	Goal     string  `json:"goal"`
	Measured float64 `json:"measured"`
	Unit     string  `json:"unit,omitempty"`   // "" for a ratio
	Detail   string  `json:"detail,omitempty"` // the figures the ratio came from
	Limit    float64 `json:"limit"`
	Met      bool    `json:"met"`
	Note     string  `json:"note,omitempty"`
}

func (b *bench) runAll() results {
	res := results{
		Tool: "gortapi latency-bench", Started: time.Now().UTC(), Smoke: b.s.smoke,
		GoVersion: runtime.Version(), Kernel: b.kernel.Uname.Release + " " + b.kernel.Uname.Version,
		KernelKind: b.kernel.Kind.String(), Preempt: b.kernel.Preempt.Effective(),
		CPUs: len(b.kernel.OnlineCPUs), CPUModel: cpuModel(), RTTests: b.tools.version,
		Rounds: b.s.rounds, Duration: b.s.duration, Interval: b.s.interval, Priority: b.s.priority, CPU: b.s.cpu,
		WorstRun: b.s.worst, LoadBefore: b.loadBefore.String(),
		Notes: append([]string(nil), b.tools.notes...),
	}
	if !b.fifo {
		res.Notes = append(res.Notes, "SCHED_FIFO cannot be set here (not root, no CAP_SYS_NICE): the real-time rows are skipped")
	}
	if b.s.canary > 0 && (!b.fifo || b.tools.cyclictest == "") {
		res.Notes = append(res.Notes, "-canary: no canary ran (it needs SCHED_FIFO and cyclictest)")
	}
	for _, g := range groups(b) {
		if len(b.s.only) > 0 && !slices.Contains(b.s.only, g.id) {
			continue
		}
		res.Groups = append(res.Groups, b.runGroup(g))
	}
	res.Goals = goals(res)
	res.Finished = time.Now().UTC()
	res.LoadAfter = loadAverage().String()
	return res
}

// runGroup runs the group's variants alternately, round after round
// (A B C A B C ...), under the group's load, and takes medians.
func (b *bench) runGroup(g group) groupResult {
	gr := groupResult{ID: g.id, Title: g.title, Desc: g.desc, Metric: g.metric, Load: "none"}
	if g.needFIFO && !b.fifo {
		gr.Skipped = "needs SCHED_FIFO (run as root or with CAP_SYS_NICE)"
		return gr
	}
	var bg *background
	if g.load != nil {
		var err error
		if bg, err = g.load(b); err != nil {
			gr.Skipped = err.Error()
			return gr
		}
		gr.Load = bg.desc
		defer bg.stop()
	}
	// rows[at[i]:at[i+1]] belong to variant i: one row, or one per task
	// of a multi-task variant plus its sleeper's.
	var rows []rowResult
	at := make([]int, len(g.variants)+1)
	for i, v := range g.variants {
		at[i] = len(rows)
		names := []string{v.name}
		if len(v.tasks) > 0 {
			names = names[:0]
			for _, t := range v.tasks {
				names = append(names, v.name+" · "+t)
			}
			if v.sleeper {
				names = append(names, v.name+" · "+sleeperRow)
			}
		}
		for _, n := range names {
			r := rowResult{Name: n, External: v.external}
			if v.skip != "" {
				r.Err = "skipped: " + v.skip
			}
			rows = append(rows, r)
		}
	}
	at[len(g.variants)] = len(rows)
	rounds := b.s.rounds
	if g.rounds > 0 {
		rounds = g.rounds
	}
	gr.Rounds = rounds
	stops := newStopMeter()
	defer stops.close()
	for round := 1; round <= rounds; round++ {
		for i, v := range g.variants {
			if v.skip != "" {
				continue
			}
			b.logf("%s: %s, round %d/%d", g.id, v.name, round, rounds)
			c := b.startCanary()
			stops.next()
			r, err := v.run()
			stopped := stops.next()
			canaryMax := b.stopCanary(c)
			recordRound(g, v, rows[at[i]:at[i+1]], round, r, err, b.logf)
			for j := at[i]; j < at[i+1]; j++ {
				if n := len(rows[j].Runs); n > 0 && rows[j].Runs[n-1].Round == round {
					rows[j].Runs[n-1].Stopped = stopped
					rows[j].Runs[n-1].Canary = canaryMax
				}
			}
		}
	}
	for i := range rows {
		var ok []latency.Summary
		for _, r := range rows[i].Runs {
			if r.Err == "" {
				ok = append(ok, r.Summary)
			} else if rows[i].Err == "" {
				rows[i].Err = r.Err
			}
		}
		rows[i].Median = medianSummary(ok)
		var p9999 []time.Duration
		for _, r := range rows[i].Runs {
			if r.Err == "" {
				p9999 = append(p9999, r.P9999)
			}
		}
		rows[i].P9999 = median(p9999)
	}
	gr.Rows = rows
	for _, rs := range g.ratios {
		num, den := findRow(rows, rs.num), findRow(rows, rs.den)
		if num == nil || den == nil || num.Median.Count == 0 || den.Median.Count == 0 {
			continue
		}
		n, d := num.Median, den.Median
		gr.Ratios = append(gr.Ratios, ratioResult{Label: rs.label, Num: rs.num, Den: rs.den,
			Min: ratio(n.Min, d.Min), Avg: ratio(n.Avg, d.Avg),
			P50: ratio(n.P50, d.P50), P99: ratio(n.P99, d.P99), P999: ratio(n.P999, d.P999), Max: ratio(n.Max, d.Max),
			Jitter: ratio(n.Max-n.P50, d.Max-d.P50), P9999: ratio(num.P9999, den.P9999),
			Missed:   ratio(time.Duration(num.Overruns), time.Duration(den.Overruns)),
			WorstMax: ratio(num.WorstMax, den.WorstMax)})
	}
	return gr
}

// record adds one round's histogram h (and what the child said about it)
// to the row.
func (row *rowResult) record(round int, h hist.Snapshot, r childResult, overruns int64) {
	p9999, _ := h.Quantile(0.9999) // a constant in (0, 1]: no error
	row.Runs = append(row.Runs, runResult{Round: round, Summary: latency.Summarize(h), Overruns: overruns,
		P9999: p9999})
	row.Overruns += overruns
	row.Cycles += r.Cycles
	row.WorstMax = max(row.WorstMax, h.Max)
	if n, ok := countOver(h, stallThreshold); ok && !row.overUnknown {
		n += derefOr0(row.Over20ms)
		row.Over20ms = &n
	} else {
		row.overUnknown, row.Over20ms = true, nil // one round that cannot tell makes the sum unknown
	}
	row.Policy, row.Wake, row.Note = r.Policy, r.Wake, r.Note
	if in := r.Interference; in != nil && in.LateThreshold > 0 {
		if row.Late == nil {
			row.Late = &lateCauses{Threshold: in.LateThreshold}
		}
		l := row.Late
		l.Samples += h.Count
		l.Late += in.Late
		l.Blocked += in.LateBlocked
		l.Preempted += in.LatePreempted
		l.GC += in.LateGC
		l.Unexplained += in.LateUnexplained
	}
}

// stallThreshold is issue 19's goal 0: no wake-up later than this.
const stallThreshold = 20 * time.Millisecond

// countOver counts the samples of h later than d (a sample in the bucket
// holding d counts when the bucket starts at or past d). ok is false when
// the histogram's bound does not reach past d, so the count cannot be
// told.
func countOver(h hist.Snapshot, d time.Duration) (n int64, ok bool) {
	if h.Width <= 0 || time.Duration(len(h.Counts))*h.Width <= d {
		return 0, false
	}
	for i, c := range h.Counts {
		if time.Duration(i)*h.Width >= d {
			n += int64(c)
		}
	}
	return n + int64(h.Overflow), true
}

func derefOr0(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// median of a list of durations or counts (0 for none).
func median[T ~int64](v []T) T {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func findRow(rows []rowResult, name string) *rowResult {
	for i := range rows {
		if rows[i].Name == name {
			return &rows[i]
		}
	}
	return nil
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// medianSummary takes the median of each figure separately.
func medianSummary(ss []latency.Summary) latency.Summary {
	if len(ss) == 0 {
		return latency.Summary{}
	}
	med := func(f func(latency.Summary) time.Duration) time.Duration {
		v := make([]time.Duration, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	var count int64
	var overflow uint64
	for _, s := range ss {
		count += s.Count
		overflow += s.Overflow
	}
	return latency.Summary{
		Count: count, Overflow: overflow,
		Min:  med(func(s latency.Summary) time.Duration { return s.Min }),
		Avg:  med(func(s latency.Summary) time.Duration { return s.Avg }),
		P50:  med(func(s latency.Summary) time.Duration { return s.P50 }),
		P90:  med(func(s latency.Summary) time.Duration { return s.P90 }),
		P99:  med(func(s latency.Summary) time.Duration { return s.P99 }),
		P999: med(func(s latency.Summary) time.Duration { return s.P999 }),
		Max:  med(func(s latency.Summary) time.Duration { return s.Max }),
	}
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minute figures.
type loadAvg struct {
	one, five, fifteen float64
	ok                 bool
}

// readLoadAverage is loadAverage; tests replace it, and the time -doc
// waits for a busy machine to settle.
var (
	readLoadAverage = loadAverage
	loadSettle      = 3 * time.Minute
	loadPoll        = 10 * time.Second
)

// loadAverage reads /proc/loadavg; ok is false where it cannot.
func loadAverage() loadAvg {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return loadAvg{}
	}
	var l loadAvg
	if n, _ := fmt.Sscanf(string(data), "%f %f %f", &l.one, &l.five, &l.fifteen); n == 3 {
		l.ok = true
	}
	return l
}

// busy: the machine is doing something else (1-minute load above 1).
func (l loadAvg) busy() bool { return l.ok && l.one > 1 }

func (l loadAvg) String() string {
	if !l.ok {
		return "unknown"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", l.one, l.five, l.fifteen)
}

// recordRound records one round of variant v in its rows: an error in
// each, or the run's histogram (its tasks', one row each, and the
// sleeper's).
func recordRound(g group, v variant, rows []rowResult, round int, r childResult, err error, logf func(string, ...any)) {
	if err != nil {
		logf("  %v", err)
		for j := range rows {
			rows[j].Runs = append(rows[j].Runs, runResult{Round: round, Err: err.Error()})
		}
		return
	}
	if len(v.tasks) == 0 {
		h := r.Latency
		if g.metric == "exec" {
			h = r.Exec
		}
		rows[0].record(round, h, r, r.Overruns)
		return
	}
	for k, t := range r.Tasks {
		if k < len(v.tasks) && k < len(rows) {
			rows[k].record(round, t.Latency, childResult{Policy: r.Policy, Wake: r.Wake, Interference: &t.Interference}, t.Overruns)
			rows[k].Runs[len(rows[k].Runs)-1].Minutes = t.Minutes
			rows[k].Cycles += t.Cycles
			rows[k].OwnP = t.OwnP
		}
	}
	if v.sleeper && r.Sleep != nil {
		rows[len(rows)-1].record(round, *r.Sleep, childResult{Policy: "SCHED_OTHER", Wake: "time.Sleep"}, 0)
	}
}
