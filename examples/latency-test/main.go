package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/flavors"
	"github.com/gortapi/gortapi/internal/latency"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// threadDistance spaces the intervals of -t tasks, as cyclictest -d does.
const threadDistance = 500 * time.Microsecond

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is the parsed command line.
type config struct {
	lat      latency.Config
	duration time.Duration
	quiet    bool
	format   string
	jsonFile string
	svgFile  string
	histFile string
	loads    []latency.Load
}

// usageError is bad input: one line, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func newFlagSet() (*flag.FlagSet, *config, func() error) {
	fs := flag.NewFlagSet("latency-test", flag.ContinueOnError)
	c := &config{}
	opts := rtapi.RegisterFlags(fs)
	prio := fs.Int("p", 0, "priority of the fastest task (0: the flavor's highest)")
	interval := fs.String("i", "1000", "period: microseconds or a duration (250us)")
	threads := fs.Int("t", 1, "number of tasks; task i runs at interval + i×500µs")
	named := fs.String("threads", "", "named tasks, LinuxCNC style: servo=1ms,base=25us")
	cpus := fs.String("a", "", "pin tasks round robin to these CPUs: 1, 0,2, 2-3")
	dur := fs.String("D", "10", "duration: seconds, 30s, 5m, 1h; 0 = until Ctrl-C")
	bound := fs.Int("h", 10000, "histogram bound in µs (1 µs buckets)")
	fs.BoolVar(&c.quiet, "q", false, "quiet: no live display, only the summary")
	fs.StringVar(&c.jsonFile, "json", "", "write every figure as JSON to `FILE`")
	fs.StringVar(&c.format, "format", "text", "output format: text or cyclictest")
	fs.StringVar(&c.histFile, "histfile", "", "write the cyclictest-layout histogram to `FILE`")
	fs.StringVar(&c.svgFile, "svg", "", "plot the latency histogram as SVG to `FILE`")
	flavor := fs.String("flavor", "", "flavor: auto, "+strings.Join(flavors.Names(), ", "))
	vanilla := fs.Bool("vanilla-fifo", false, "SCHED_FIFO + POSIX timers on a non-RT kernel (seed 000)")
	wake := fs.String("wake", "auto", "wake mode: auto, nanosleep, timerfd, posix-timer")
	overrun := fs.String("overrun", "catchup", "overrun policy: catchup or skip")
	raw := fs.Bool("raw-sleep", false, "nanosleep keeps the Go scheduler's P (RawSyscall)")
	fs.Func("load", "load to generate: alloc=200MB/s, hrtimers=100, cpu=N (repeatable, or comma-separated)", func(s string) error {
		for _, item := range strings.Split(s, ",") {
			l, err := latency.ParseLoad(item)
			if err != nil {
				return err
			}
			c.loads = append(c.loads, l)
		}
		return nil
	})
	body := fs.String("body", "", "task body of known cost: busy=50us")
	replay := fs.String("sim-replay", "", "on -flavor sim: replay the latency histogram in `FILE` (a latency-test -json file or a cyclictest histogram) as every task's wake-up jitter")
	watchdog := fs.String("watchdog", "off", "rtapi's runaway-task watchdog: off, auto (rtapi's default) or a timeout such as 100ms")
	fs.Var(&c.lat.Interference, "interference", "per-cycle interference counters: auto, on or off")

	finish := func() error {
		c.lat.Options = *opts
		if *flavor != "" {
			if *flavor != "auto" {
				if _, err := flavors.Lookup(*flavor); err != nil {
					return usagef("-flavor: %v", err)
				}
			}
			c.lat.Options.Flavor = *flavor
		}
		if *vanilla {
			c.lat.Options.VanillaFIFO = true
		}
		period, err := latency.ParseMicros(*interval)
		if err != nil {
			return usagef("-i: %v", err)
		}
		if period < flavors.MinPeriod {
			return usagef("-i: interval %v is below the %v floor", period, flavors.MinPeriod)
		}
		switch {
		case *named != "" && *threads != 1:
			return usagef("-t and -threads exclude each other")
		case *named != "":
			defs, err := latency.ParseThreads(*named)
			if err != nil {
				return usagef("-threads: %v", err)
			}
			for _, d := range defs {
				if d.Period < flavors.MinPeriod {
					return usagef("-threads: %s period %v is below the %v floor", d.Name, d.Period, flavors.MinPeriod)
				}
			}
			c.lat.Tasks = defs
		case *threads < 1 || *threads > 256:
			return usagef("-t: want 1 to 256 tasks, got %d", *threads)
		case *threads == 1:
			c.lat.Tasks = []latency.TaskDef{{Name: "servo", Period: period}}
		default:
			for i := range *threads {
				c.lat.Tasks = append(c.lat.Tasks, latency.TaskDef{
					Name: fmt.Sprintf("T%d", i), Period: period + time.Duration(i)*threadDistance})
			}
		}
		if *prio < 0 || *prio > flavors.PrioHighest {
			return usagef("-p: priority %d out of range [%d, %d] (0: highest)", *prio, flavors.PrioLowest, flavors.PrioHighest)
		}
		c.lat.Priority = *prio
		if *cpus != "" {
			if c.lat.CPUs, err = latency.ParseCPUList(*cpus); err != nil {
				return usagef("-a: %v", err)
			}
		}
		if c.duration, err = latency.ParseRunDuration(*dur); err != nil {
			return usagef("-D: %v", err)
		}
		if *bound <= 0 || *bound > 1_000_000 {
			return usagef("-h: histogram bound must be 1 to 1000000 µs, got %d", *bound)
		}
		c.lat.HistogramBound = time.Duration(*bound) * time.Microsecond
		if c.lat.Wake, err = rtapi.ParseWakeMode(*wake); err != nil {
			return usagef("-wake: %v", err)
		}
		if c.lat.Overrun, err = rtapi.ParseOverrunPolicy(*overrun); err != nil {
			return usagef("-overrun: %v", err)
		}
		c.lat.RawSleep = *raw
		if *replay != "" {
			if c.lat.Options.Flavor != "sim" {
				return usagef("-sim-replay needs -flavor sim")
			}
			h, err := readReplay(*replay)
			if err != nil {
				return usagef("-sim-replay: %v", err)
			}
			c.lat.SimJitter = rtapi.HistogramJitter(h)
		}
		switch *watchdog {
		case "off":
			c.lat.Watchdog = -1
		case "auto":
			c.lat.Watchdog = 0
		default:
			if c.lat.Watchdog, err = time.ParseDuration(*watchdog); err != nil || c.lat.Watchdog <= 0 {
				return usagef("-watchdog: want off, auto or a positive duration, got %q", *watchdog)
			}
		}
		if *body != "" {
			if c.lat.Body, err = latency.ParseBody(*body); err != nil {
				return usagef("-body: %v", err)
			}
		}
		if c.format != "text" && c.format != "cyclictest" {
			return usagef("-format: unknown format %q (valid: text, cyclictest)", c.format)
		}
		return nil
	}
	return fs, c, finish
}

// parse parses args; -help gives flag.ErrHelp after printing the usage.
func parse(args []string, stdout io.Writer) (*config, error) {
	fs, c, finish := newFlagSet()
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintln(stdout, "usage: latency-test [flags]   (go doc ./examples/latency-test for the whole story)")
			fs.PrintDefaults()
			return nil, err
		}
		return nil, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (all settings are flags)", fs.Arg(0))
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "latency-test: %v\n", err)
		return exitUsage
	}

	loads := latency.StartLoads(c.loads)
	live := newDisplay(stdout, c.format)
	var tick func(time.Duration, []latency.TaskStats)
	every := time.Duration(0)
	if !c.quiet {
		every, tick = time.Second, live.draw
	}
	started := time.Now()
	res, err := latency.Run(ctx, c.lat, c.duration, every, tick)
	loads.Stop()
	interrupted := err != nil && ctx.Err() != nil
	if err != nil && !interrupted {
		if res.Kernel == nil {
			fmt.Fprintf(stderr, "latency-test: %v\n", err)
			if errors.Is(err, latency.ErrSpec) {
				return exitUsage
			}
			return exitFailure
		}
		fmt.Fprintf(stderr, "latency-test: %v\n", err)
	}
	live.finish()

	code := exitOK
	if err != nil && !interrupted {
		code = exitFailure
	}
	if c.format == "cyclictest" {
		writeCyclictest(stdout, res)
		if c.histFile == "" {
			if werr := latency.WriteHistogram(stdout, latencyHists(res)); werr != nil {
				fmt.Fprintf(stderr, "latency-test: histogram: %v\n", werr)
			}
		}
	} else {
		writeSummary(stdout, c, res, interrupted)
	}
	if c.histFile != "" {
		if err := writeFile(c.histFile, func(w io.Writer) error { return latency.WriteHistogram(w, latencyHists(res)) }); err != nil {
			fmt.Fprintf(stderr, "latency-test: -histfile: %v\n", err)
			code = exitFailure
		}
	}
	if c.jsonFile != "" {
		doc := newJSONDoc(c, res, started, interrupted)
		if err := writeFile(c.jsonFile, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(doc)
		}); err != nil {
			fmt.Fprintf(stderr, "latency-test: -json: %v\n", err)
			code = exitFailure
		}
	}
	if c.svgFile != "" {
		var series []latency.Series
		for _, t := range res.Tasks {
			series = append(series, latency.Series{Name: t.Name, Hist: t.Latency})
		}
		title := fmt.Sprintf("gortapi wake-up latency, %s flavor, %s", res.Flavor.Name, res.Kernel.Uname.Release)
		if err := writeFile(c.svgFile, func(w io.Writer) error { return latency.WriteSVG(w, title, series) }); err != nil {
			fmt.Fprintf(stderr, "latency-test: -svg: %v\n", err)
			code = exitFailure
		}
	}
	return code
}

func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func latencyHists(res latency.Result) []rtapi.Histogram {
	hs := make([]rtapi.Histogram, len(res.Tasks))
	for i, t := range res.Tasks {
		hs[i] = t.Latency
	}
	return hs
}

// display is the live view: redrawn in place on a terminal, plain lines
// when piped.
type display struct {
	w      io.Writer
	tty    bool
	format string
	drawn  int // lines drawn last time (terminal only)
}

func newDisplay(w io.Writer, format string) *display {
	return &display{w: w, tty: isTerminal(w), format: format}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func (d *display) draw(elapsed time.Duration, ts []latency.TaskStats) {
	lines := make([]string, 0, len(ts))
	for i, t := range ts {
		if d.format == "cyclictest" {
			lines = append(lines, latency.FormatThreadLine(latency.LineOf(i, t)))
		} else {
			lines = append(lines, liveLine(elapsed, t))
		}
	}
	var b strings.Builder
	if d.tty {
		if d.drawn > 0 {
			fmt.Fprintf(&b, "\033[%dA", d.drawn)
		}
		for _, l := range lines {
			b.WriteString("\r\033[2K")
			b.WriteString(l)
			b.WriteByte('\n')
		}
		d.drawn = len(lines)
	} else {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	io.WriteString(d.w, b.String())
}

func (d *display) finish() {
	if d.drawn > 0 {
		io.WriteString(d.w, "\n")
	}
}

// liveLine is one task's live figures: LinuxCNC latency-test's columns
// plus cyclictest's.
func liveLine(elapsed time.Duration, t latency.TaskStats) string {
	l := t.Latency
	if l.Count == 0 {
		return fmt.Sprintf("%6.1fs %-8s %v: no cycles yet", elapsed.Seconds(), t.Name, t.Period)
	}
	return fmt.Sprintf("%6.1fs %-8s %8v cycles %8d  lat min %6s avg %6s max %7s µs  jitter %7s µs  overruns %d  csw %d/%d",
		elapsed.Seconds(), t.Name, t.Period, t.Cycles,
		latency.Micros(time.Duration(l.Min)), latency.Micros(l.Mean()), latency.Micros(time.Duration(l.Max)),
		latency.Micros(t.MaxJitter()), t.Overruns, t.VoluntarySwitches, t.InvoluntarySwitches)
}

func writeCyclictest(w io.Writer, res latency.Result) {
	for i, t := range res.Tasks {
		fmt.Fprintln(w, latency.FormatThreadLine(latency.LineOf(i, t)))
	}
}

// writeSummary is the text report: what ran where and why, percentiles,
// per-task counters, execution time and a histogram per task.
func writeSummary(w io.Writer, c *config, res latency.Result, interrupted bool) {
	k := res.Kernel
	rtNote := "real-time"
	if !res.Flavor.RealTime {
		rtNote = "not real-time"
	}
	fmt.Fprintf(w, "latency-test: %d task(s) for %.1fs on flavor %s (%s)", len(res.Tasks), res.Elapsed.Seconds(), res.Flavor.Name, rtNote)
	if interrupted {
		fmt.Fprint(w, ", interrupted")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  kernel: %s %s, preemption %s, CPUs online %v isolated %v\n",
		k.Kind, k.Uname.Release, k.Preempt.Effective(), k.OnlineCPUs, k.IsolatedCPUs)
	fmt.Fprintf(w, "  why:    %s\n", res.Flavor.Why)
	if hint := betterHint(res); hint != "" {
		fmt.Fprintf(w, "  better: %s\n", hint)
	}
	if len(c.loads) > 0 {
		var names []string
		for _, l := range c.loads {
			names = append(names, l.String())
		}
		fmt.Fprintf(w, "  load:   %s\n", strings.Join(names, ", "))
	}
	if c.lat.Body.Busy > 0 {
		fmt.Fprintf(w, "  body:   busy %v per cycle\n", c.lat.Body.Busy)
	}
	for _, t := range res.Tasks {
		if t.Degraded != "" {
			fmt.Fprintf(w, "  degraded %s: %s\n", t.Name, t.Degraded)
		}
	}
	fmt.Fprintln(w)

	var lat, exec []latency.Named
	for _, t := range res.Tasks {
		lat = append(lat, latency.Named{Name: t.Name, Summary: latency.Summarize(t.Latency)})
		exec = append(exec, latency.Named{Name: t.Name, Summary: latency.Summarize(t.Exec)})
	}
	latency.WritePercentiles(w, "wake-up latency", lat)
	fmt.Fprintln(w)
	latency.WritePercentiles(w, "execution time", exec)
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task\tperiod\tpolicy\tprio\tcpus\twake\tcycles\toverruns\twait errors\tmax jitter µs\tctx sw vol/invol\tfaults min/maj")
	for _, t := range res.Tasks {
		cpus := "any"
		if len(t.CPUs) > 0 {
			cpus = strings.Trim(fmt.Sprint(t.CPUs), "[]")
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%d\t%s\t%s\t%d\t%d\t%d\t%s\t%d/%d\t%d/%d\n",
			t.Name, t.Period, t.Policy, t.Priority, cpus, t.Wake, t.Cycles, t.Overruns, t.WaitErrors,
			latency.Micros(t.MaxJitter()), t.VoluntarySwitches, t.InvoluntarySwitches, t.MinorFaults, t.MajorFaults)
	}
	tw.Flush()
	writeInterference(w, res)
	for _, t := range res.Tasks {
		fmt.Fprintf(w, "\nwake-up latency histogram, %s (log-scale bars):\n", t.Name)
		latency.WriteTextHistogram(w, t.Latency, 16)
	}
}

// betterHint says what would give better figures than this run had.
func betterHint(res latency.Result) string {
	if res.Flavor.Name == "sim" {
		return "the sim flavor runs on a virtual clock: its latencies are the injected ones (-sim-replay); measure this machine with -flavor posix or rt-preempt"
	}
	if res.Flavor.RealTime {
		for _, t := range res.Tasks {
			if t.Policy != "SCHED_FIFO" {
				return "the flavor wanted SCHED_FIFO but did not get it: run as root or grant CAP_SYS_NICE (setcap cap_sys_nice,cap_ipc_lock+ep BINARY)"
			}
		}
		if res.Kernel.Kind != kerneldetect.PreemptRT {
			return "SCHED_FIFO on a kernel that is not PREEMPT_RT: worst cases stay unbounded; boot a PREEMPT_RT kernel for hard real-time"
		}
		return ""
	}
	if c, ok := res.Kernel.Check(kerneldetect.CheckSchedFIFO); ok && c.Status == kerneldetect.StatusOK {
		return "this run was SCHED_OTHER: -vanilla-fifo (SCHED_FIFO + POSIX timers, seed 000) or -flavor rt-preempt give real-time priority here"
	}
	return "this run was SCHED_OTHER: run as root or grant CAP_SYS_NICE, then use -vanilla-fifo or -flavor rt-preempt; boot a PREEMPT_RT kernel for hard real-time"
}

// writeInterference shows rtapi's per-cycle interference counters: what
// the kernel and the Go runtime did to each task, and the causes of its
// late wake-ups.
func writeInterference(w io.Writer, res latency.Result) {
	on := false
	for _, t := range res.Tasks {
		if t.Interference.LateThreshold > 0 {
			on = true
		}
	}
	if !on {
		return
	}
	fmt.Fprintln(w, "\ninterference (cycles in which it happened; late wake-ups by first cause):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task\tpreempted\tblocked\tGC\tfaults\tlate over\tlate\tblocked\tpreempted\tGC\tunexplained")
	for _, t := range res.Tasks {
		i := t.Interference
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%v\t%d\t%d\t%d\t%d\t%d\n", t.Name, i.PreemptedCycles, i.BlockedCycles,
			i.GCCycles, i.FaultCycles, i.LateThreshold, i.Late, i.LateBlocked, i.LatePreempted, i.LateGC, i.LateUnexplained)
	}
	tw.Flush()
}

// readReplay reads the latency histogram to replay on sim: the first
// task's of a latency-test -json file, or the first column of a
// cyclictest histogram (-h / --histfile output).
func readReplay(name string) (rtapi.Histogram, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return rtapi.Histogram{}, err
	}
	var doc jsonDoc
	if json.Unmarshal(data, &doc) == nil {
		if len(doc.Tasks) == 0 || doc.Tasks[0].Latency.Histogram.Count == 0 {
			return rtapi.Histogram{}, fmt.Errorf("%s: no task with latency samples", name)
		}
		return doc.Tasks[0].Latency.Histogram, nil
	}
	hs, err := latency.ParseHistogram(bytes.NewReader(data))
	if err != nil {
		return rtapi.Histogram{}, fmt.Errorf("%s is neither a latency-test -json file nor a cyclictest histogram: %v", name, err)
	}
	if hs[0].Count == 0 {
		return rtapi.Histogram{}, fmt.Errorf("%s: no samples", name)
	}
	return hs[0], nil
}
