package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/rtapi"
)

// cyclictest's command line: rt-tests 2.40's getopt_long table, read
// apart from latency-test's own flags so that both mix on one line.

// ctArg is how a cyclictest option takes its value.
type ctArg int

const (
	ctNone     ctArg = iota
	ctRequired       // -i200, -i 200, --interval=200, --interval 200
	ctOptional       // -t4, --threads=4; cyclictest also takes a number in the next argument
)

// ctOption is one row of cyclictest's option table.
type ctOption struct {
	short byte   // 0: long only
	long  string // "": short only
	arg   ctArg
	// goFlag is latency-test's flag of the same meaning, whose spelling
	// the option is rewritten to; "" for the options ctArgs keeps.
	goFlag string
	// instead, when set, refuses the option with this message: what
	// gortapi offers instead.
	instead string
}

// ctTable is cyclictest 2.40's option table (cyclictest --help; its
// getopt string is "a::A::b:c:d:D:F:h:H:i:l:MNo:p:mqrRsSt::uvD:x").
var ctTable = []ctOption{
	{short: 'a', long: "affinity", arg: ctOptional},
	{short: 'A', long: "aligned", arg: ctOptional, instead: "latency-test does not align wake-ups to an offset; each task starts one period after it is started"},
	{short: 'b', long: "breaktrace", arg: ctRequired},
	{short: 'c', long: "clock", arg: ctRequired, instead: "gortapi's tasks always run on CLOCK_MONOTONIC"},
	{long: "default-system", instead: "latency-test always holds /dev/cpu_dma_latency at 0 when it can, as cyclictest does by default"},
	{short: 'd', long: "distance", arg: ctRequired},
	{short: 'D', long: "duration", arg: ctRequired, goFlag: "D"},
	{short: 'F', long: "fifo", arg: ctRequired, instead: "latency-test writes no named pipe; -json FILE writes every figure at the end, and the live lines go to stdout"},
	{short: 'h', long: "histogram", arg: ctRequired, goFlag: "h"},
	{short: 'H', long: "histofall", arg: ctRequired},
	{long: "histfile", arg: ctRequired, goFlag: "histfile"},
	{short: 'i', long: "interval", arg: ctRequired, goFlag: "i"},
	{long: "json", arg: ctRequired, goFlag: "json"},
	{long: "laptop", instead: "latency-test always holds /dev/cpu_dma_latency at 0 when it can"},
	{long: "latency", arg: ctRequired, instead: "latency-test holds /dev/cpu_dma_latency at 0 only"},
	{short: 'l', long: "loops", arg: ctRequired},
	{long: "mainaffinity", arg: ctRequired, instead: "pin the whole process with taskset, or the tasks with -a / -rtapi.cpu"},
	{short: 'm', long: "mlockall", goFlag: "m"},
	{short: 'M', long: "refresh_on_max"},
	{short: 'N', long: "nsecs"},
	{short: 'o', long: "oscope", arg: ctRequired, instead: "latency-test has no oscilloscope mode; -json FILE keeps every histogram bucket"},
	{short: 'p', long: "priority", arg: ctRequired, goFlag: "p"},
	{long: "policy", arg: ctRequired},
	{long: "priospread"},
	{short: 'q', long: "quiet", goFlag: "q"},
	{short: 'r', long: "relative", instead: "gortapi's tasks sleep to absolute deadlines only (-wake nanosleep, timerfd or posix-timer)"},
	{short: 'R', long: "resolution", instead: "rtcheck reports the clock and timer resolution"},
	{long: "secaligned", arg: ctOptional, instead: "latency-test does not align wake-ups to the second"},
	{short: 's', long: "system", instead: ctSystem},
	{short: 'S', long: "smp"},
	{long: "smi", instead: "gortapi does not read the SMI counter; rtapi's interference counters (-interference on) show what else delayed a task"},
	{long: "spike", arg: ctRequired, instead: "the summary's interference table counts late wake-ups and their causes; -json FILE keeps every histogram bucket"},
	{long: "spike-nodes", arg: ctRequired, instead: "the summary's interference table counts late wake-ups and their causes"},
	{short: 't', long: "threads", arg: ctOptional},
	{long: "tracemark"},
	{short: 'u', long: "unbuffered"},
	{short: 'v', long: "verbose"},
	{long: "dbg_cyclictest", instead: "-trace FILE writes a Go execution trace of the run"},
	{short: 'x', long: "posix_timers"},
}

// ctSystem refuses cyclictest's -s (-s alone is LinuxCNC's servo only).
const ctSystem = "gortapi has no setitimer mode; -wake nanosleep, timerfd or posix-timer"

// ctArgs is a command line read with cyclictest's table: latency-test's
// own flags (rewritten to its spelling) and what only cyclictest has.
type ctArgs struct {
	goArgs     []string // for latency-test's flag set
	positional []string // arguments that are not options
	// only: an option or a spelling that only cyclictest has was given
	only bool

	loops        int64 // -l: 0 runs for -D
	distanceUS   int   // -d, µs; -1: not given
	smp          bool  // -S
	allCPUs      bool  // -t without a number
	pinAll       bool  // -a without a CPU set, or -S
	priospread   bool
	policy       string // --policy, lower case; "" when not given
	nsecs        bool   // -N
	refreshOnMax bool   // -M
	histofall    bool   // -H
	posixTimers  bool   // -x
	verbose      bool   // -v: every wake-up latency, as index:cycle:value
	breakUS      int    // -b: stop tracing and end the run past this latency, µs; 0: not given
	tracemark    bool   // --tracemark
	servoOnly    bool   // -s: LinuxCNC's servo thread only
	warnings     []string
}

// ctLookupShort and ctLookupLong find a row of ctTable.
func ctLookupShort(c byte) (ctOption, bool) {
	for _, o := range ctTable {
		if o.short == c && c != 0 {
			return o, true
		}
	}
	return ctOption{}, false
}

// ctLookupLong finds a long option by its name or, as getopt_long does,
// by a prefix that names one option only.
func ctLookupLong(name string) (ctOption, error) {
	var found []ctOption
	for _, o := range ctTable {
		if o.long == "" {
			continue
		}
		if o.long == name {
			return o, nil
		}
		if strings.HasPrefix(o.long, name) {
			found = append(found, o)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return ctOption{}, usagef("unknown option --%s (latency-test -help lists latency-test's flags and cyclictest's)", name)
	}
	return ctOption{}, usagef("option --%s is ambiguous (--%s, --%s ...)", name, found[0].long, found[1].long)
}

// isGoFlag reports whether tok is spelled as one of fs's flags (-name,
// --name, -name=value) and, if so, the flag.
func isGoFlag(fs *flag.FlagSet, tok string) (*flag.Flag, string, bool) {
	name := strings.TrimPrefix(strings.TrimPrefix(tok, "-"), "-")
	value, hasValue := "", false
	if i := strings.IndexByte(name, '='); i >= 0 {
		name, value, hasValue = name[:i], name[i+1:], true
	}
	f := fs.Lookup(name)
	if f == nil || name == "" || (hasValue && value == "" && !isBool(f)) {
		return nil, "", false
	}
	return f, name, true
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// ctNumber is cyclictest's test for an optional value given in the next
// argument (-t 4, -a 0-1): atoi of it is non-zero, or for CPU lists it
// starts with 0 or '!'.
func ctNumber(s string, cpuList bool) bool {
	if s == "" {
		return false
	}
	if n, err := strconv.Atoi(leadingDigits(s)); err == nil && n != 0 {
		return true
	}
	return cpuList && (s[0] == '0' || s[0] == '!')
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// parseCyclictestArgs reads args as GNU getopt_long reads cyclictest's:
// short options combine (-Sp90), values attach (-i200) or follow (-i
// 200), long options take --name=value or --name value, a unique prefix
// of a long name works, and "--" ends the options. An argument spelled as
// one of fs's flags (-flavor posix, --priority=80, -help) is passed on to
// fs as it is. Bounded: one pass over args.
func parseCyclictestArgs(fs *flag.FlagSet, args []string) (*ctArgs, error) {
	ct := &ctArgs{distanceUS: -1}
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			ct.positional = append(ct.positional, args[i+1:]...)
			break
		}
		if len(tok) < 2 || tok[0] != '-' {
			ct.positional = append(ct.positional, tok)
			continue
		}
		next := func() (string, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		if tok == "-help" || tok == "--help" {
			ct.goArgs = append(ct.goArgs, "-help")
			continue
		}
		if f, name, ok := isGoFlag(fs, tok); ok && !ctOwned(name, tok, args, i) {
			ct.goArgs = append(ct.goArgs, tok)
			if !isBool(f) && !strings.Contains(tok, "=") {
				v, ok := next()
				if !ok && name == "h" {
					return nil, usagef("flag needs an argument: %s (-h US is cyclictest's histogram bound in µs; -help shows the help)", tok)
				}
				if !ok {
					return nil, usagef("flag needs an argument: %s", tok)
				}
				ct.goArgs = append(ct.goArgs, v)
			}
			continue
		}
		if strings.HasPrefix(tok, "--") {
			name, value, hasValue := strings.Cut(tok[2:], "=")
			o, err := ctLookupLong(name)
			if err != nil {
				return nil, err
			}
			var val *string
			switch {
			case hasValue && o.arg == ctNone:
				return nil, usagef("option --%s takes no value", o.long)
			case hasValue:
				val = &value
			case o.arg == ctRequired:
				v, ok := next()
				if !ok {
					return nil, usagef("option --%s needs a value", o.long)
				}
				val = &v
			case o.arg == ctOptional && i+1 < len(args) && ctNumber(args[i+1], o.short == 'a'):
				v, _ := next()
				val = &v
			}
			if err := ct.apply(o, "--"+o.long, val, tok); err != nil {
				return nil, err
			}
			continue
		}
		// a cluster of short options: -Sp90, -mqi200, -t
		for j := 1; j < len(tok); j++ {
			o, ok := ctLookupShort(tok[j])
			if !ok {
				return nil, usagef("unknown option -%c in %q (latency-test -help lists latency-test's flags and cyclictest's)", tok[j], tok)
			}
			spelled := "-" + string(tok[j])
			if o.arg == ctNone {
				if err := ct.apply(o, spelled, nil, tok); err != nil {
					return nil, err
				}
				continue
			}
			rest := tok[j+1:]
			var val *string
			switch {
			case rest != "":
				val = &rest
			case o.arg == ctRequired:
				v, ok := next()
				if !ok {
					return nil, usagef("option %s needs a value", spelled)
				}
				val = &v
			case i+1 < len(args) && ctNumber(args[i+1], o.short == 'a'):
				v, _ := next()
				val = &v
			}
			if err := ct.apply(o, spelled, val, tok); err != nil {
				return nil, err
			}
			break
		}
	}
	return ct, nil
}

// ctOwned: -t, -a and --threads are read with cyclictest's rules (their
// value is optional there), except -threads with a LinuxCNC list
// (servo=1ms,base=25us) and -t or -a with a value Go's flag package would
// read the same.
func ctOwned(name, tok string, args []string, i int) bool {
	value, attached := "", false
	if k := strings.IndexByte(tok, '='); k >= 0 {
		value, attached = tok[k+1:], true
	} else if i+1 < len(args) {
		value = args[i+1]
	}
	switch name {
	case "threads":
		return !strings.Contains(value, "=")
	case "t", "a", "affinity":
		return !attached && !ctNumber(value, name != "t")
	}
	return false
}

// apply records one option; tok is the argument it came from.
func (ct *ctArgs) apply(o ctOption, spelled string, val *string, tok string) error {
	if spelled == "-s" {
		ct.servoOnly = true // LinuxCNC's; cyclictest's -s is refused in parse
		return nil
	}
	if o.instead != "" {
		return usagef("cyclictest's %s is not supported: %s", spelled, o.instead)
	}
	value := ""
	if val != nil {
		value = *val
	}
	// Go's flag package reads every spelling it can before this: what
	// reaches here is cyclictest's alone (a cluster, an attached value,
	// an abbreviation, an optional value left out).
	ct.only = true
	if o.goFlag != "" {
		if o.arg == ctNone {
			ct.goArgs = append(ct.goArgs, "-"+o.goFlag)
		} else {
			ct.goArgs = append(ct.goArgs, "-"+o.goFlag, value)
		}
		return nil
	}
	atoi := func() (int, error) {
		n, err := strconv.Atoi(value)
		if err != nil {
			return 0, usagef("%s: want a whole number, got %q", spelled, value)
		}
		return n, nil
	}
	switch o.short {
	case 'a':
		if val == nil {
			ct.pinAll = true
		} else {
			ct.goArgs = append(ct.goArgs, "-a", value)
		}
		return nil
	case 't':
		if val == nil {
			ct.allCPUs = true
			return nil
		}
		ct.allCPUs = false
		ct.goArgs = append(ct.goArgs, "-t", value)
		return nil
	case 'd':
		n, err := atoi()
		if err != nil || n < 0 || n > 1_000_000 {
			return usagef("%s: distance must be 0 to 1000000 µs, got %q", spelled, value)
		}
		ct.distanceUS = n
	case 'H':
		ct.histofall = true
		ct.goArgs = append(ct.goArgs, "-h", value)
	case 'l':
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 {
			return usagef("%s: want a loop count (0: endless), got %q", spelled, value)
		}
		ct.loops = n
	case 'b':
		n, err := atoi()
		if err != nil || n <= 0 || int64(n) > int64(rtapi.MaxPeriod/time.Microsecond) {
			return usagef("%s: want a latency threshold in µs (1 or more), got %q", spelled, value)
		}
		ct.breakUS = n
	case 'M':
		ct.refreshOnMax = true
	case 'N':
		ct.nsecs = true
	case 'S':
		ct.smp, ct.pinAll = true, true
	case 'u':
		// latency-test never buffers its output: nothing to do
	case 'v':
		ct.verbose = true
	case 'x':
		ct.posixTimers = true
	case 0:
		switch o.long {
		case "priospread":
			ct.priospread = true
		case "tracemark":
			ct.tracemark = true
		case "policy":
			p := strings.ToLower(value)
			switch p {
			case "fifo", "other", "normal":
				ct.policy = p
			case "rr":
				return usagef("--policy rr: gortapi runs real-time tasks SCHED_FIFO only (--policy fifo)")
			case "batch", "idle":
				return usagef("--policy %s: gortapi runs SCHED_FIFO or, unprivileged, SCHED_OTHER (--policy fifo or other)", p)
			default:
				return usagef("--policy: unknown policy %q (fifo, other)", value)
			}
		}
	}
	return nil
}

// applyCyclictest applies -d, -S, -t and -a without a value, and the
// same interval for every thread with -h, as cyclictest does; it returns
// the distance between the -t tasks' intervals.
func (c *config) applyCyclictest(fs *flag.FlagSet, threads *int, cpus *string) (time.Duration, error) {
	ct := c.ct
	distance := threadDistance
	if ct.distanceUS >= 0 {
		distance = time.Duration(ct.distanceUS) * time.Microsecond
	}
	if c.format == "cyclictest" && c.histogram > 0 {
		if ct.distanceUS >= 0 {
			ct.warnings = append(ct.warnings, "distance is ignored and set to 0, if histogram enabled")
		}
		distance = 0
	}
	if !ct.smp && !ct.allCPUs && !ct.pinAll {
		return distance, nil
	}
	avail, err := availableCPUs()
	if err != nil {
		return 0, err
	}
	if ct.smp {
		if given(fs, "t") {
			ct.warnings = append(ct.warnings, "-t ignored due to smp mode")
		}
		if given(fs, "a", "affinity") {
			ct.warnings = append(ct.warnings, "-a ignored due to smp mode")
		}
		*cpus = ""
	}
	if ct.smp || ct.allCPUs && !given(fs, "t") {
		*threads = len(avail)
	}
	if ct.pinAll && *cpus == "" {
		list := make([]string, len(avail))
		for i, cpu := range avail {
			list[i] = strconv.Itoa(cpu)
		}
		*cpus = strings.Join(list, ",")
	}
	return distance, nil
}

// applyPolicy applies --policy and --priospread's default priority as
// cyclictest does: fifo without -p, or --priospread without -p, defaults
// the priority to the number of threads + 1; other with -p is SCHED_FIFO.
func (c *config) applyPolicy(fs *flag.FlagSet, prio *int) error {
	ct := c.ct
	if (ct.policy == "fifo" || ct.priospread) && !c.explicitPrio {
		*prio = len(c.lat.Tasks) + 1
		c.explicitPrio = true
		ct.warnings = append(ct.warnings, fmt.Sprintf("defaulting realtime priority to %d", *prio))
	}
	if ct.policy != "other" && ct.policy != "normal" {
		return nil
	}
	if c.explicitPrio {
		ct.warnings = append(ct.warnings, "policy and priority don't match: setting policy to SCHED_FIFO")
		return nil
	}
	switch c.lat.Options.Flavor {
	case "", "auto":
		c.lat.Options.Flavor = "posix"
	case "posix", "sim":
	default:
		return usagef("--policy %s: the %s flavor runs SCHED_FIFO; use -flavor posix", ct.policy, c.lat.Options.Flavor)
	}
	if given(fs, "vanilla-fifo", "rtapi.vanilla-fifo") && c.lat.Options.VanillaFIFO == rtapi.On {
		return usagef("--policy %s and -vanilla-fifo exclude each other", ct.policy)
	}
	c.lat.Options.VanillaFIFO = rtapi.Off
	return nil
}

// verboseSamples is how many wake-ups a task keeps for -v between two
// reads, as cyclictest's VALBUF_SIZE.
const verboseSamples = 16384

// sampler prints every task's wake-up latencies as cyclictest -v does
// ("%8d:%8lu:%8ld": thread, cycle from 0, µs or with -N ns), read every
// 10 ms, as cyclictest's main loop reads them.
type sampler struct {
	w     io.Writer
	nsecs bool
	s     *latency.Session
	next  []int64
	stop  chan struct{}
	done  chan struct{}
}

func startSampler(w io.Writer, s *latency.Session, tasks int, nsecs bool) *sampler {
	sp := &sampler{w: w, nsecs: nsecs, s: s, next: make([]int64, tasks), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sp.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sp.stop:
				return
			case <-t.C:
				sp.drain()
			}
		}
	}()
	return sp
}

func (sp *sampler) drain() {
	var b strings.Builder
	for i := range sp.next {
		sp.next[i] = sp.s.Samples(i, sp.next[i], func(cycle int64, late time.Duration) {
			v := int64(late) / 1000
			if sp.nsecs {
				v = int64(late)
			}
			fmt.Fprintf(&b, "%8d:%8d:%8d\n", i, cycle, v)
		})
	}
	io.WriteString(sp.w, b.String())
}

// finish stops the sampler and prints what is left.
func (sp *sampler) finish() {
	if sp == nil {
		return
	}
	close(sp.stop)
	<-sp.done
	sp.drain()
}

// applyBreak turns -b and --tracemark into rtapi's trace hook: past -b's
// threshold a task writes a marker to the kernel's trace and stops
// tracing, and the run ends (cyclictest -b --tracemark; latency-test's -b
// always writes the marker, which --tracemark only confirms). traceDir is
// -trace-dir: a tracefs directory or trace instance, "" for the mounted
// tracefs.
func (c *config) applyBreak(traceDir string) error {
	ct := c.ct
	switch {
	case ct.breakUS == 0 && ct.tracemark:
		return usagef("--tracemark writes a trace marker when -b's latency threshold is exceeded: give -b US too")
	case ct.breakUS == 0 && traceDir != "":
		return usagef("-trace-dir is where -b writes its trace marker: give -b US too")
	case ct.breakUS == 0:
		return nil
	}
	c.lat.TraceMark = time.Duration(ct.breakUS) * time.Microsecond
	c.lat.TraceStop = true
	c.lat.TraceDir = traceDir
	return nil
}

// writeBreak prints cyclictest -b's last lines: the threads' ids and, when
// a task stopped tracing, which and how late it woke (µs, ns with -N).
func writeBreak(w io.Writer, res latency.Result, nsecs bool) {
	fmt.Fprint(w, "# Thread Ids:")
	for _, t := range res.Tasks {
		fmt.Fprintf(w, " %05d", t.Tid)
	}
	fmt.Fprintln(w)
	for _, t := range res.Tasks {
		if t.TraceStopCycle == 0 {
			continue
		}
		v := int64(t.TraceStopLatency / time.Microsecond)
		if nsecs {
			v = int64(t.TraceStopLatency)
		}
		fmt.Fprintf(w, "# Break thread: %d\n# Break value: %d\n", t.Tid, v)
		return
	}
}
