package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
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
}

func parse(args []string, stderr io.Writer) (*settings, string, error) {
	fs := flag.NewFlagSet("latency-bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := &settings{}
	child := fs.String("child", "", "internal: run one measurement described by this JSON and print its result")
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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.PrintDefaults()
		}
		return nil, "", err
	}
	if *child != "" {
		return nil, *child, nil
	}
	if fs.NArg() > 0 {
		return nil, "", fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if s.duration, err = latency.ParseRunDuration(*dur); err != nil || s.duration < time.Second {
		return nil, "", fmt.Errorf("-d: want at least 1s, got %q", *dur)
	}
	if s.interval, err = latency.ParseMicros(*interval); err != nil || s.interval < 10*time.Microsecond {
		return nil, "", fmt.Errorf("-i: want an interval of at least 10µs, got %q", *interval)
	}
	if s.rounds < 1 || s.rounds > 100 {
		return nil, "", fmt.Errorf("-rounds: want 1 to 100, got %d", s.rounds)
	}
	if s.priority < 1 || s.priority > 98 {
		return nil, "", fmt.Errorf("-p: want a priority in [1, 98], got %d", s.priority)
	}
	if _, err := latency.ParseLoad("alloc=" + s.alloc); err != nil {
		return nil, "", fmt.Errorf("-alloc: %v", err)
	}
	if *only != "" {
		for _, id := range strings.Split(*only, ",") {
			if !slices.Contains(groupIDs(), id) {
				return nil, "", fmt.Errorf("-only: unknown group %q (valid: %s)", id, strings.Join(groupIDs(), ", "))
			}
			s.only = append(s.only, id)
		}
	}
	if s.smoke {
		s.rounds, s.duration = 1, time.Second
	}
	return s, "", nil
}

func run(args []string, stdout, stderr io.Writer) int {
	s, child, err := parse(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "latency-bench: %v\n", err)
		return exitUsage
	case child != "":
		if err := runChild(child, stdout); err != nil {
			fmt.Fprintf(stderr, "latency-bench child: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	b, err := newBench(s, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "latency-bench: %v\n", err)
		return exitFailure
	}
	defer os.RemoveAll(b.dir)
	res := b.runAll()
	code := exitOK
	if err := writeJSON(s.jsonFile, res); err != nil {
		fmt.Fprintf(stderr, "latency-bench: -json: %v\n", err)
		code = exitFailure
	}
	report := renderMarkdown(res)
	if s.docFile != "" {
		if err := os.WriteFile(s.docFile, []byte(report), 0o644); err != nil {
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
	return os.WriteFile(name, append(data, '\n'), 0o644)
}

// bench is one benchmark run.
type bench struct {
	s      *settings
	tools  *tools
	self   string
	dir    string
	fifo   bool // SCHED_FIFO can be set
	kernel *kerneldetect.Report
	log    io.Writer
}

func newBench(s *settings, log io.Writer) (*bench, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
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
	b := &bench{s: s, self: self, dir: dir, kernel: k, log: log, fifo: sys.ProbeSchedFIFO() == nil}
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
	out, err := runTool(b.s.duration, b.self, "-child", string(data))
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
	Round   int             `json:"round"`
	Summary latency.Summary `json:"summary"`
	Err     string          `json:"error,omitempty"`
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
	// value, for execution-time rows (seed 001's "spike from the average").
	Jitter float64 `json:"jitter"`
}

type goalResult struct {
	Goal     string  `json:"goal"`
	Measured float64 `json:"measured"`
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
		Notes: append([]string(nil), b.tools.notes...),
	}
	if !b.fifo {
		res.Notes = append(res.Notes, "SCHED_FIFO cannot be set here (not root, no CAP_SYS_NICE): the real-time rows are skipped")
	}
	for _, g := range groups(b) {
		if len(b.s.only) > 0 && !slices.Contains(b.s.only, g.id) {
			continue
		}
		res.Groups = append(res.Groups, b.runGroup(g))
	}
	res.Goals = goals(res)
	res.Finished = time.Now().UTC()
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
	rows := make([]rowResult, len(g.variants))
	for i, v := range g.variants {
		rows[i].Name, rows[i].External = v.name, v.external
		if v.skip != "" {
			rows[i].Err = "skipped: " + v.skip
		}
	}
	for round := 1; round <= b.s.rounds; round++ {
		for i, v := range g.variants {
			if v.skip != "" {
				continue
			}
			b.logf("%s: %s, round %d/%d", g.id, v.name, round, b.s.rounds)
			r, err := v.run()
			rr := runResult{Round: round}
			if err != nil {
				rr.Err = err.Error()
				b.logf("  %v", err)
			} else {
				h := r.Latency
				if g.metric == "exec" {
					h = r.Exec
				}
				rr.Summary = latency.Summarize(h)
				rows[i].Policy, rows[i].Wake, rows[i].Note = r.Policy, r.Wake, r.Note
				if in := r.Interference; in != nil && in.LateThreshold > 0 {
					if rows[i].Late == nil {
						rows[i].Late = &lateCauses{Threshold: in.LateThreshold}
					}
					l := rows[i].Late
					l.Samples += r.Latency.Count
					l.Late += in.Late
					l.Blocked += in.LateBlocked
					l.Preempted += in.LatePreempted
					l.GC += in.LateGC
					l.Unexplained += in.LateUnexplained
				}
			}
			rows[i].Runs = append(rows[i].Runs, rr)
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
			Jitter: ratio(n.Max-n.P50, d.Max-d.P50)})
	}
	return gr
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
