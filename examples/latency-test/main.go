package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/examples/internal/outfile"
	"github.com/gortapi/gortapi/flavors"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/latencyfile"
	"github.com/gortapi/gortapi/rtapi/sim"
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
	trace    string // -trace: a Go execution trace of the run
	loads    []latency.Load
	// histogram is -h: the histogram's bound in µs, printed at the end
	// in -format cyclictest; 0 when not asked for.
	histogram int
	// explicitPrio: -p was given, which means real-time.
	explicitPrio bool
	// ct is what only cyclictest's command line says (-l, -d, -S, ...).
	ct *ctArgs
	// distance between the -t tasks' intervals (-d)
	distance time.Duration
	// cyclictest: the command line is cyclictest's (invoked as
	// cyclictest, or an option only cyclictest has): cyclictest's output,
	// priorities and exit status.
	cyclictest bool
	// linuxcnc: LinuxCNC latency-test's form (periods as arguments, or
	// -s): its tasks, and its table in the summary
	linuxcnc      bool
	linuxcncTasks []latency.TaskDef
}

// invokedAs is the program's name: as "cyclictest" (a link or a copy of
// the binary) the command line and output are cyclictest's.
var invokedAs = filepath.Base(os.Args[0])

// maxOverflowCycles caps the overflow cycle numbers kept per task
// (cyclictest keeps as many as -h has buckets).
const maxOverflowCycles = 10_000

// given reports whether one of the named flags was on the command line,
// whatever its value.
func given(fs *flag.FlagSet, names ...string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || slices.Contains(names, f.Name) })
	return set
}

// toggle is On for true, Off for false: a flag given explicitly.
func toggle(on bool) rtapi.Toggle {
	if on {
		return rtapi.On
	}
	return rtapi.Off
}

// usageError is bad input: one line, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func newFlagSet() (*flag.FlagSet, *config, func() error) {
	fs := flag.NewFlagSet("latency-test", flag.ContinueOnError)
	c := &config{}
	opts := rtapi.RegisterFlags(fs)
	// cyclictest's spellings: a short flag and its long twin share one
	// variable (-p/--priority, -h/--histogram, ...).
	prio := fs.Int("p", 0, "priority of the fastest task (0: the flavor's highest). An explicit -p means real-time, as for cyclictest: SCHED_FIFO (-vanilla-fifo on a non-RT kernel), and a warning on stderr when it cannot be had")
	fs.IntVar(prio, "priority", 0, "same as -p")
	interval := fs.String("i", "1000", "period: microseconds or a duration (250us)")
	fs.StringVar(interval, "interval", "1000", "same as -i")
	threads := fs.Int("t", 1, "number of tasks; task i runs at interval + i×500µs")
	named := fs.String("threads", "", "named tasks, LinuxCNC style: servo=1ms,base=25us (not cyclictest's --threads=N: use -t N)")
	cpus := fs.String("a", "", "pin tasks round robin to these CPUs: 1, 0,2, 2-3")
	fs.StringVar(cpus, "affinity", "", "same as -a")
	dur := fs.String("D", "10", "duration: seconds, 30s, 5m, 1h; 0 = until Ctrl-C")
	fs.StringVar(dur, "duration", "10", "same as -D")
	fs.IntVar(&c.histogram, "h", 0, "histogram: print the latency histogram up to `US` µs (1 µs buckets) at the end, as cyclictest -h does; it also bounds the histograms (default 10000)")
	fs.IntVar(&c.histogram, "histogram", 0, "same as -h")
	mlock := fs.Bool("m", false, "lock memory (mlockall), as cyclictest -m; same as -rtapi.lock-memory on")
	fs.BoolVar(mlock, "mlockall", false, "same as -m")
	fs.BoolVar(&c.quiet, "q", false, "quiet: no live display, only the summary (-format cyclictest: what cyclictest -q prints)")
	fs.BoolVar(&c.quiet, "quiet", false, "same as -q")
	fs.StringVar(&c.jsonFile, "json", "", "write every figure as JSON to `FILE` (-format cyclictest: cyclictest --json's layout)")
	fs.StringVar(&c.format, "format", "text", "output format: text or cyclictest")
	fs.StringVar(&c.histFile, "histfile", "", "write the cyclictest-layout histogram to `FILE` instead of stdout")
	fs.StringVar(&c.svgFile, "svg", "", "plot the latency histogram as SVG to `FILE`")
	fs.StringVar(&c.trace, "trace", "", "write a Go execution trace of the run to `FILE` (runtime/trace; read it with go tool trace), to see what the Go scheduler did to late wake-ups")
	flavor := fs.String("flavor", "", "flavor: auto, "+strings.Join(flavors.Names(), ", "))
	vanilla := fs.Bool("vanilla-fifo", false, "SCHED_FIFO + POSIX timers on a non-RT kernel")
	wake := fs.String("wake", "auto", "wake mode: auto, nanosleep, timerfd, posix-timer")
	overrun := fs.String("overrun", "catchup", "overrun policy: catchup or skip")
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
	traceDir := fs.String("trace-dir", "", "with -b: the tracefs `DIR` to write the marker in and stop tracing, such as a trace instance /sys/kernel/tracing/instances/NAME (default: the mounted tracefs); it must be a tracefs")

	finish := func() error {
		c.lat.Options = *opts
		if *flavor != "" {
			if *flavor != "auto" {
				if !slices.Contains(flavors.Names(), *flavor) {
					return usagef("-flavor: unknown flavor %q (valid: auto, %s)", *flavor, strings.Join(flavors.Names(), ", "))
				}
			}
			c.lat.Options.Flavor = *flavor
		}
		if given(fs, "vanilla-fifo") { // wins over -rtapi.vanilla-fifo, even when false
			c.lat.Options.VanillaFIFO = toggle(*vanilla)
		}
		distance, err := c.applyCyclictest(fs, threads, cpus)
		if err != nil {
			return err
		}
		c.distance = distance
		period, err := latency.ParseMicros(*interval)
		if err != nil {
			return usagef("-i: %v", err)
		}
		if period <= 0 { // the floor is the flavor's: NewTask checks it
			return usagef("-i: interval %v is not positive", period)
		}
		switch {
		case c.linuxcnc:
			c.lat.Tasks = c.linuxcncTasks
		case *named != "" && *threads != 1:
			return usagef("-t and -threads exclude each other")
		case *named != "":
			defs, err := latency.ParseThreads(*named)
			if err != nil {
				return usagef("-threads: %v", err)
			}
			c.lat.Tasks = defs
		case *threads < 1 || *threads > 256:
			return usagef("-t: want 1 to 256 tasks, got %d", *threads)
		case *threads == 1:
			c.lat.Tasks = []latency.TaskDef{{Name: "servo", Period: period}}
		default:
			for i := range *threads {
				c.lat.Tasks = append(c.lat.Tasks, latency.TaskDef{
					Name: fmt.Sprintf("T%d", i), Period: period + time.Duration(i)*distance})
			}
		}
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "p" || f.Name == "priority" {
				c.explicitPrio = true
			}
		})
		if given(fs, "m", "mlockall") { // wins over -rtapi.lock-memory, even when false
			c.lat.Options.LockMemory = toggle(*mlock)
		}
		if given(fs, "rtapi.histogram-bound") {
			return usagef("-rtapi.histogram-bound: latency-test bounds its histograms with -h US")
		}
		if err := c.applyPolicy(fs, prio); err != nil {
			return err
		}
		if c.explicitPrio && !given(fs, "vanilla-fifo", "rtapi.vanilla-fifo") && c.lat.Options.Flavor != "sim" {
			// cyclictest -p runs SCHED_FIFO on any kernel: so do we
			c.lat.Options.VanillaFIFO = rtapi.On
		}
		if *prio < 0 { // the top of the range is the flavor's: rt.PrioHighest, checked at Open
			return usagef("-p: priority %d is negative (0: highest)", *prio)
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
		if c.histogram < 0 || c.histogram > 1_000_000 {
			return usagef("-h: histogram bound must be 1 to 1000000 µs (0: no histogram), got %d", c.histogram)
		}
		c.lat.HistogramBound = 10 * time.Millisecond
		if c.histogram > 0 {
			c.lat.HistogramBound = time.Duration(c.histogram) * time.Microsecond
			c.lat.OverflowCycles = min(c.histogram, maxOverflowCycles)
		}
		if c.lat.Wake, err = rtapi.ParseWakeMode(*wake); err != nil {
			return usagef("-wake: %v", err)
		}
		if c.ct.posixTimers {
			if given(fs, "wake") && c.lat.Wake != rtapi.WakePosixTimer {
				return usagef("-x (POSIX timers) and -wake %s exclude each other", *wake)
			}
			c.lat.Wake = rtapi.WakePosixTimer
		}
		if c.lat.Overrun, err = rtapi.ParseOverrunPolicy(*overrun); err != nil {
			return usagef("-overrun: %v", err)
		}
		if *replay != "" {
			if c.lat.Options.Flavor != "sim" {
				return usagef("-sim-replay needs -flavor sim")
			}
			if c.lat.SimJitter, err = readReplay(*replay); err != nil {
				return usagef("-sim-replay: %v", err)
			}
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
		if c.ct.nsecs && c.histogram > 0 {
			return usagef("-N with -h: cyclictest's histogram would then have 1 ns buckets; latency-test's have 1 µs: drop -N, or use -json FILE for figures in ns")
		}
		if c.format == "cyclictest" {
			// cyclictest runs every thread at -p unless --priospread, and
			// with -h every thread at -i
			c.lat.SamePriority = *named == "" && !c.ct.priospread
			if !given(fs, "overrun") {
				c.lat.Overrun = rtapi.Skip // cyclictest's: one wake-up measured per cycle
			}
			if c.explicitPrio && !given(fs, "rtapi.strict") {
				// cyclictest exits 1 when it cannot have SCHED_FIFO
				c.lat.Options.Strict = rtapi.On
			}
		}
		c.lat.Loops = c.ct.loops
		return c.applyBreak(*traceDir)
	}
	return fs, c, finish
}

const usageHead = `usage: latency-test [flags]   (go doc ./examples/latency-test for the whole story)
       latency-test [flags] [-s] [base-period [servo-period]]   (LinuxCNC's form:
       base 25us and servo 1ms by default, -s the servo thread only; the summary
       adds LinuxCNC's Max Interval / Max Jitter / Last interval table)

cyclictest's command line works too, in every spelling of its getopt
(-Sp90, -i200, -t, --interval=200, --prior=80). When the command line is
cyclictest's (the program invoked as cyclictest, or an option only
cyclictest has: -S, -x, -l, -d, -N, -M, -u, -v, -H, --priospread, --policy,
or a spelling only getopt reads), latency-test prints what cyclictest
prints and, as cyclictest, runs every thread at -p unless --priospread,
measures one wake-up per cycle, and exits 1 when SCHED_FIFO was asked
for and refused; -format cyclictest does the same. cyclictest's options
without a meaning here are refused, naming what latency-test offers.

`

// parse parses args; -help gives flag.ErrHelp after printing the usage
// on usage.
// args are read with cyclictest's getopt rules (parseCyclictestArgs), so
// that latency-test's flags and cyclictest's spellings mix.
func parse(args []string, usage io.Writer) (*config, error) {
	fs, c, finish := newFlagSet()
	fs.SetOutput(io.Discard)
	ct, err := parseCyclictestArgs(fs, args)
	if err != nil {
		return nil, err
	}
	c.ct = ct
	if err := fs.Parse(ct.goArgs); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(usage)
			fmt.Fprint(usage, usageHead+"flags:\n")
			fs.PrintDefaults()
			return nil, err
		}
		return nil, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (all settings are flags)", fs.Arg(0))
	}
	c.cyclictest = invokedAs == "cyclictest" || ct.only
	if ct.servoOnly && c.cyclictest {
		return nil, usagef("cyclictest's -s is not supported: %s", ctSystem)
	}
	c.linuxcnc = len(ct.positional) > 0 || ct.servoOnly
	if c.linuxcnc {
		if c.cyclictest || given(fs, "t", "i", "interval", "threads") {
			return nil, usagef("LinuxCNC's form (latency-test [-s] [base-period [servo-period]]) and cyclictest's or -t, -i, -threads exclude each other; got %q", args)
		}
		defs, err := latency.LinuxCNCThreads(ct.positional, ct.servoOnly)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		c.linuxcncTasks = defs
	}
	if c.cyclictest && !given(fs, "format") {
		c.format = "cyclictest"
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr) // -help's usage goes to stderr, as every example's
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "latency-test: %v\n", err)
		return exitUsage
	}
	// An output that cannot be written fails now, not after the run.
	outputs, err := createOutputs(c)
	if err != nil {
		fmt.Fprintf(stderr, "latency-test: %v\n", err)
		return exitUsage
	}
	defer outputs.discard()

	// cyclictest holds /dev/cpu_dma_latency at 0 whatever the policy: the
	// real-time flavors hold it, the posix flavor on SCHED_OTHER
	// (--policy other) does not, so latency-test holds it too.
	var dma *os.File
	if c.lat.Options.Flavor != "sim" {
		dma = holdDMALatency()
		defer dma.Close()
	}
	loads := latency.StartLoads(c.loads)
	live := newDisplay(stdout, c.format)
	var tick func(time.Duration, []latency.TaskStats)
	every := time.Duration(0)
	if !c.quiet {
		every, tick = time.Second, live.draw
	}
	for _, w := range c.ct.warnings {
		fmt.Fprintf(stderr, "latency-test: %s\n", w)
	}
	live.nsecs, live.refreshOnMax = c.ct.nsecs, c.ct.refreshOnMax
	var samples *sampler
	if c.ct.verbose {
		// cyclictest -v prints the samples instead of the status block
		every, tick = 0, nil
		c.lat.Samples = verboseSamples
	}
	c.lat.OnStart = func(s *latency.Session) {
		live.virtual = s.RT().Flavor().Name == "sim"
		ts := s.Snapshot()
		if c.ct.verbose {
			online := len(s.RT().Kernel().OnlineCPUs)
			fmt.Fprintf(stdout, "Max CPUs = %d\nOnline CPUs = %d\n", max(online, runtime.NumCPU()), online)
		}
		if f := s.RT().Flavor(); c.format == "cyclictest" && (dmaHeld(f) || dma != nil && f.Name != "sim") {
			fmt.Fprintln(stdout, "# /dev/cpu_dma_latency set to 0us")
		}
		if c.ct.verbose {
			for i, t := range ts {
				next := t.Period // cyclictest prints the next thread's interval
				if c.histogram == 0 {
					next += c.distance
				}
				fmt.Fprintf(stdout, "Thread %d Interval: %d\n", i, next.Microseconds())
			}
			samples = startSampler(stdout, s, len(ts), c.ct.nsecs)
		}
		if w := priorityWarning(c, s.RT().Flavor(), ts); w != "" {
			fmt.Fprintf(stderr, "latency-test: %s\n", w)
		}
	}
	if c.trace != "" {
		f, err := outfile.Create(c.trace, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "latency-test: -trace: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			fmt.Fprintf(stderr, "latency-test: execution trace: %v\n", err)
			return 1
		}
		defer func() {
			trace.Stop()
			if err := f.Commit(); err != nil {
				fmt.Fprintf(stderr, "latency-test: -trace: %v\n", err)
			}
		}()
	}
	started := time.Now()
	res, err := latency.Run(ctx, c.lat, c.duration, every, tick)
	ended := time.Now()
	samples.finish()
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
		// cyclictest prints its threads' final lines unless it prints a
		// histogram (-h), which goes to stdout or --histfile.
		switch {
		case c.histogram == 0 && c.ct.verbose && !c.quiet:
			// cyclictest -v without -q ends with the samples
		case c.histogram == 0:
			writeCyclictest(stdout, res, c.ct.nsecs)
		case c.histFile == "":
			if werr := writeHistogram(stdout, res, c.ct.histofall); werr != nil {
				fmt.Fprintf(stderr, "latency-test: histogram: %v\n", werr)
			}
		}
		if c.ct.breakUS > 0 {
			writeBreak(stdout, res, c.ct.nsecs)
		}
	} else {
		writeSummary(stdout, c, res, interrupted)
		for _, t := range res.Tasks {
			if t.TraceStopCycle > 0 {
				fmt.Fprintf(stdout, "break: task %s (tid %d) woke %v late in cycle %d: trace marker written, tracing stopped (-b %d)\n",
					t.Name, t.Tid, t.TraceStopLatency, t.TraceStopCycle, c.ct.breakUS)
				break
			}
		}
	}
	if f := outputs.hist; f != nil {
		if err := outputs.finish(f, func(w io.Writer) error { return writeHistogram(w, res, c.ct.histofall) }); err != nil {
			fmt.Fprintf(stderr, "latency-test: -histfile: %v\n", err)
			code = exitFailure
		}
	}
	if f := outputs.json; f != nil {
		write := func(w io.Writer) error {
			return newJSONDoc(c, res, started, interrupted).Write(w)
		}
		if c.format == "cyclictest" {
			write = func(w io.Writer) error {
				return latency.WriteCyclictestJSON(w, latency.CyclictestRun{
					Cmdline: strings.Join(append([]string{"latency-test"}, args...), " "), Version: "gortapi latency-test",
					Start: started, End: ended, ReturnCode: code,
					RealTime: res.Kernel.Kind == kerneldetect.PreemptRT,
					Tasks:    res.Tasks, Histogram: c.histogram > 0,
				})
			}
		}
		if err := outputs.finish(f, write); err != nil {
			fmt.Fprintf(stderr, "latency-test: -json: %v\n", err)
			code = exitFailure
		}
	}
	if f := outputs.svg; f != nil {
		var series []latency.Series
		for _, t := range res.Tasks {
			series = append(series, latency.Series{Name: t.Name, Hist: t.Latency})
		}
		title := fmt.Sprintf("gortapi wake-up latency, %s flavor, %s", res.Flavor.Name, res.Kernel.Uname.Release)
		if err := outputs.finish(f, func(w io.Writer) error { return latency.WriteSVG(w, title, series) }); err != nil {
			fmt.Fprintf(stderr, "latency-test: -svg: %v\n", err)
			code = exitFailure
		}
	}
	return code
}

// holdDMALatency holds /dev/cpu_dma_latency at 0 until the file it
// returns is closed: deep C-states, whose exit delays a wake-up, are
// kept off. It returns nil where the file cannot be written (no such
// file, or not root and no udev rule; rtcheck gives the remedy).
func holdDMALatency() *os.File {
	f, err := os.OpenFile("/dev/cpu_dma_latency", os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	if _, err := f.Write(make([]byte, 4)); err != nil { // a binary s32: 0 in either byte order
		f.Close()
		return nil
	}
	return f
}

// dmaHeld reports whether the flavor holds /dev/cpu_dma_latency at 0, as
// cyclictest does and announces in its first line.
func dmaHeld(f rtapi.FlavorInfo) bool { return strings.Contains(f.Why, "cpu_dma_latency held at 0") }

// priorityWarning says when an explicit -p did not give SCHED_FIFO: a
// cyclictest user compares real-time figures and must not compare
// SCHED_OTHER ones unknowingly.
func priorityWarning(c *config, f rtapi.FlavorInfo, ts []latency.TaskStats) string {
	if !c.explicitPrio || f.Name == "sim" {
		return ""
	}
	for _, t := range ts {
		if t.Policy != "SCHED_FIFO" {
			why := t.Degraded
			if why == "" {
				why = f.Why
			}
			return fmt.Sprintf("-p %d asked for real-time, but task %s runs %s: %s (-rtapi.strict refuses to run so)", c.lat.Priority, t.Name, t.Policy, why)
		}
	}
	return ""
}

// writeHistogram writes cyclictest's histogram; histofall (-H) adds
// cyclictest's summary column over all threads to the rows and to the
// Total, Max and Overflows lines when there are two threads or more.
func writeHistogram(w io.Writer, res latency.Result, histofall bool) error {
	at := make([][]int64, len(res.Tasks))
	for i, t := range res.Tasks {
		at[i] = t.OverflowCycles
	}
	hs := latencyHists(res)
	if !histofall || len(hs) < 2 {
		return latencyfile.WriteHistfile(w, hs, at)
	}
	var b strings.Builder
	if err := latencyfile.WriteHistfile(&b, hs, at); err != nil {
		return err
	}
	var total, overflows uint64
	var maxmax int64
	for _, h := range hs {
		total += uint64(h.Count) - h.Overflow
		overflows += h.Overflow
		maxmax = max(maxmax, int64(h.Max)/1000)
	}
	row := 0
	var out strings.Builder
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		body := strings.TrimSuffix(line, "\n")
		switch {
		case body != "" && body[0] >= '0' && body[0] <= '9':
			var sum uint64
			for _, h := range hs {
				if row < len(h.Counts) {
					sum += h.Counts[row]
				}
			}
			row++
			body += fmt.Sprintf("\t%06d", sum)
		case strings.HasPrefix(body, "# Total:"):
			body += fmt.Sprintf(" %09d", total)
		case strings.HasPrefix(body, "# Max Latencies:"):
			body += fmt.Sprintf(" %05d", maxmax)
		case strings.HasPrefix(body, "# Histogram Overflows:"):
			body += fmt.Sprintf(" %05d", overflows)
		}
		out.WriteString(body)
		if strings.HasSuffix(line, "\n") {
			out.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// outputFiles are the -histfile, -json and -svg files, created before the
// run so that an unwritable path is a usage error at once. Each is put at
// its name when written (examples/internal/outfile: a symlink there is
// replaced, not followed).
type outputFiles struct{ hist, json, svg *outfile.File }

func createOutputs(c *config) (outputFiles, error) {
	var o outputFiles
	for _, f := range []struct {
		flag, name string
		file       **outfile.File
	}{{"-histfile", c.histFile, &o.hist}, {"-json", c.jsonFile, &o.json}, {"-svg", c.svgFile, &o.svg}} {
		if f.name == "" {
			continue
		}
		file, err := outfile.Create(f.name, 0o644)
		if err != nil {
			o.discard()
			return outputFiles{}, fmt.Errorf("%s: %w", f.flag, err)
		}
		*f.file = file
	}
	return o, nil
}

// finish writes one output and puts it at its name.
func (o *outputFiles) finish(f *outfile.File, write func(io.Writer) error) error {
	for _, p := range []**outfile.File{&o.hist, &o.json, &o.svg} {
		if *p == f {
			*p = nil // finished: discard leaves it alone
		}
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Commit()
}

// discard drops the files that were created but never written: a run
// that failed leaves no empty outputs behind, and what was at their
// names stays.
func (o *outputFiles) discard() {
	for _, f := range []*outfile.File{o.hist, o.json, o.svg} {
		if f != nil {
			f.Close()
		}
	}
}

func latencyHists(res latency.Result) []hist.Snapshot {
	hs := make([]hist.Snapshot, len(res.Tasks))
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
	// virtual: the sim flavor, whose tasks have no OS thread figures
	virtual bool
	// nsecs: cyclictest -N's thread lines; refreshOnMax: cyclictest -M,
	// redraw only when a task's maximum grew
	nsecs, refreshOnMax bool
	maxSeen             []int64
}

func newDisplay(w io.Writer, format string) *display {
	return &display{w: w, tty: isTerminal(w), format: format}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return cli.IsTerminal(f)
}

func (d *display) draw(elapsed time.Duration, ts []latency.TaskStats) {
	if d.refreshOnMax {
		grew := len(d.maxSeen) != len(ts)
		if grew {
			d.maxSeen = make([]int64, len(ts))
		}
		for i, t := range ts {
			if int64(t.Latency.Max) > d.maxSeen[i] {
				d.maxSeen[i], grew = int64(t.Latency.Max), true
			}
		}
		if !grew {
			return
		}
	}
	lines := make([]string, 0, len(ts)+2)
	if d.format == "cyclictest" && len(ts) > 0 {
		// cyclictest's status block: policy and load, a blank line, a
		// line per thread
		lines = append(lines, fmt.Sprintf("policy: %s: loadavg: %s          ", cyclictestPolicy(ts[0].Policy), loadavg()), "")
	}
	for i, t := range ts {
		if d.format == "cyclictest" {
			lines = append(lines, latency.FormatThreadLine(threadLine(i, t, d.nsecs)))
		} else {
			lines = append(lines, liveLine(elapsed, t, d.virtual))
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

// cyclictestPolicy names a policy as cyclictest's status line does:
// "other/other" for SCHED_OTHER, since cyclictest adds "/other" whenever
// a thread runs SCHED_OTHER (priority 0: --policy other, or no -p).
func cyclictestPolicy(p string) string {
	switch p {
	case "SCHED_FIFO":
		return "fifo"
	case "SCHED_RR":
		return "rr"
	}
	return "other/other"
}

// loadavg is /proc/loadavg's line, as cyclictest shows it.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func (d *display) finish() {
	if d.drawn > 0 {
		io.WriteString(d.w, "\n")
	}
}

// liveLine is one task's live figures: LinuxCNC latency-test's columns
// plus cyclictest's.
func liveLine(elapsed time.Duration, t latency.TaskStats, virtual bool) string {
	l := t.Latency
	if l.Count == 0 {
		return fmt.Sprintf("%6.1fs %-8s %v: no cycles yet", elapsed.Seconds(), t.Name, t.Period)
	}
	line := fmt.Sprintf("%6.1fs %-8s %8v cycles %8d  lat min %6s avg %6s max %7s µs  jitter %7s µs  overruns %d",
		elapsed.Seconds(), t.Name, t.Period, t.Cycles,
		latency.Micros(time.Duration(l.Min)), latency.Micros(l.Mean()), latency.Micros(time.Duration(l.Max)),
		latency.Micros(t.MaxJitter()), t.Overruns)
	if virtual {
		return line // virtual time: no OS thread to count switches of
	}
	return line + fmt.Sprintf("  csw %d/%d", t.VoluntarySwitches, t.InvoluntarySwitches)
}

func writeCyclictest(w io.Writer, res latency.Result, nsecs bool) {
	for i, t := range res.Tasks {
		fmt.Fprintln(w, latency.FormatThreadLine(threadLine(i, t, nsecs)))
	}
}

// threadLine is a task's cyclictest line, in ns with -N.
func threadLine(i int, t latency.TaskStats, nsecs bool) latency.ThreadLine {
	if nsecs {
		return latency.LineOfNs(i, t)
	}
	return latency.LineOf(i, t)
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
	missed := false
	for _, t := range res.Tasks {
		lat = append(lat, latency.Named{Name: t.Name, Summary: latency.Summarize(t.Latency), Missed: latency.MissedReleases(t), Bound: bound(t.Latency)})
		exec = append(exec, latency.Named{Name: t.Name, Summary: latency.Summarize(t.Exec), Bound: bound(t.Exec)})
		missed = missed || latency.MissedReleases(t) > 0
	}
	latency.WritePercentilesOf(w, "wake-up latency", "wake-ups", lat)
	if missed {
		fmt.Fprintln(w, "  missed: releases the task was never woken for (overruns); the percentiles are of the wake-ups measured and leave them out")
	}
	fmt.Fprintln(w)
	latency.WritePercentilesOf(w, "execution time", "body runs", exec)
	fmt.Fprintln(w, "  percentiles are upper edges of 1 µs buckets (p50 1.0: at most 1 µs), ≥B past the histogram's bound B; min, avg and max are exact")
	fmt.Fprintln(w)
	writeVerdict(w, res)

	virtual := res.Flavor.Name == "sim"
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task\tperiod\tpolicy\tprio\tcpus\twake\tcycles\toverruns\twait errors\tmax jitter µs\tctx sw vol/invol\tfaults min/maj since thread start")
	for _, t := range res.Tasks {
		cpus := "any"
		if len(t.CPUs) > 0 {
			cpus = strings.Trim(fmt.Sprint(t.CPUs), "[]")
		}
		// On sim the tasks run on a virtual clock, scheduled by virtual
		// priority; the host thread's policy and counters mean nothing.
		policy := t.Policy
		csw, faults := fmt.Sprintf("%d/%d", t.VoluntarySwitches, t.InvoluntarySwitches), fmt.Sprintf("%d/%d", t.MinorFaults, t.MajorFaults)
		if virtual {
			policy, csw, faults = "virtual", "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n",
			t.Name, t.Period, policy, t.Priority, cpus, t.Wake, t.Cycles, t.Overruns, t.WaitErrors,
			latency.Micros(t.MaxJitter()), csw, faults)
	}
	tw.Flush()
	if c.linuxcnc {
		writeLinuxCNC(w, res)
	}
	writeInterference(w, res)
	for _, t := range res.Tasks {
		fmt.Fprintf(w, "\nwake-up latency histogram, %s (log-scale bars):\n", t.Name)
		latency.WriteTextHistogram(w, t.Latency, 16)
	}
}

// bound is a histogram's upper bound.
func bound(h hist.Snapshot) time.Duration { return time.Duration(len(h.Counts)) * h.Width }

// notSustainable is the fraction of missed releases from which the
// verdict says a period cannot be sustained.
const notSustainable = 0.01

// writeVerdict says, task by task, whether its period was kept: the
// fraction of releases missed (overruns) out of all its releases.
func writeVerdict(w io.Writer, res latency.Result) {
	fmt.Fprintln(w, "verdict:")
	for _, t := range res.Tasks {
		fmt.Fprintf(w, "  %s\n", verdict(t))
	}
	fmt.Fprintln(w)
}

// verdict is one task's line: "base 25µs: 90 % of releases missed (…) —
// not sustainable on this machine".
func verdict(t latency.TaskStats) string {
	missed := latency.MissedReleases(t)
	releases := t.Latency.Count + missed
	head := fmt.Sprintf("%s %v:", t.Name, t.Period)
	switch {
	case releases == 0:
		return head + " no release yet"
	case missed == 0:
		return fmt.Sprintf("%s every release of %d woken for", head, releases)
	}
	f := float64(missed) / float64(releases)
	pct := strconv.FormatFloat(100*f, 'f', 1, 64)
	if f >= 0.1 {
		pct = strconv.FormatFloat(100*f, 'f', 0, 64)
	}
	line := fmt.Sprintf("%s %s %% of releases missed (%d of %d)", head, pct, missed, releases)
	if f >= notSustainable {
		return line + " — not sustainable on this machine"
	}
	return line + " — overruns: see the interference table, or a longer period"
}

// writeLinuxCNC is LinuxCNC latency-test's table: per thread, the longest
// interval between two starts, the largest |interval − period| and the
// last interval, in ns.
func writeLinuxCNC(w io.Writer, res latency.Result) {
	fmt.Fprintln(w, "\nLinuxCNC latency-test:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tMax Interval (ns)\tMax Jitter (ns)\tLast interval (ns)\t")
	for _, t := range res.Tasks {
		name := strings.ToUpper(t.Name[:1]) + t.Name[1:]
		fmt.Fprintf(tw, "%s thread (%v):\t%d\t%d\t%d\t\n", name, t.Period, t.MaxInterval.Nanoseconds(), t.MaxIntervalJitter.Nanoseconds(), t.LastInterval.Nanoseconds())
	}
	tw.Flush()
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
		return "this run was SCHED_OTHER: -vanilla-fifo (SCHED_FIFO + POSIX timers on a non-RT kernel) or -flavor rt-preempt give real-time priority here"
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
	virtual := res.Flavor.Name == "sim"
	fmt.Fprintln(w, "\ninterference (cycles in which it happened; wake-ups later than the threshold, by first cause):")
	if virtual {
		fmt.Fprintln(w, "  (sim: no OS thread, so no thread counters or causes; the late wake-ups are the injected jitter)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task\tpreempted\tblocked\tGC\tfaults\tlate threshold\tlate wake-ups\tlate blocked\tlate preempted\tlate GC\tlate unexplained")
	for _, t := range res.Tasks {
		i := t.Interference
		cols := []string{fmt.Sprint(i.PreemptedCycles), fmt.Sprint(i.BlockedCycles), fmt.Sprint(i.GCCycles), fmt.Sprint(i.FaultCycles),
			i.LateThreshold.String(), fmt.Sprint(i.Late), fmt.Sprint(i.LateBlocked), fmt.Sprint(i.LatePreempted), fmt.Sprint(i.LateGC), fmt.Sprint(i.LateUnexplained)}
		if virtual {
			for _, k := range []int{0, 1, 2, 3, 6, 7, 8, 9} {
				cols[k] = "-"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\n", t.Name, strings.Join(cols, "\t"))
	}
	tw.Flush()
}

// readReplay reads the latency to replay on sim: the first task's of a
// latency-test -json file, or the first column of a cyclictest histogram
// (-h / --histfile output).
func readReplay(name string) (sim.Jitter, error) {
	f, err := os.Open(name)
	if err != nil {
		return sim.Jitter{}, err
	}
	defer f.Close()
	j, err := latencyfile.ReadJitter(f, 0)
	if err != nil {
		return sim.Jitter{}, fmt.Errorf("%s: %w", name, err)
	}
	return j, nil
}
