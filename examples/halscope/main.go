// Command halscope makes a triggered capture of a sampler HAL component's
// channel, in the spirit of LinuxCNC's halscope, and writes it as CSV and
// as an SVG plot:
//
//	halscope [-c CHAN] [-trigger PIN -edge rising|falling|high|low|auto -level X]
//	         [-pre N] [-n N] [-csv FILE] [-svg FILE] [-names a,b,...] [-pins 0,2]
//
// It reads channel CHAN (sampler.CHAN) of the host on -rtapi.instance
// (else $RTAPI_INSTANCE; the group likewise, rtapi.RegisterShmFlags)
// from another process, as examples/halsampler does, and waits for the
// trigger: pin PIN (sampler.CHAN.pin.PIN; a bit counts as 0 or 1) rising
// through the level (from below it to at or above it), falling through
// it, being at or above it (high) or at or below it (low); auto fires on
// the first sample. The capture holds N samples (default 1000): up to
// -pre of them before the trigger (default a tenth; fewer if the trigger
// came sooner), the trigger sample, and the rest after it.
//
// The CSV (stdout unless -csv names a file) has a header line, then one
// line per sample: the cycle number, the time from the trigger in
// seconds, and the pins' values. The SVG (-svg) draws each chosen pin
// (-pins, default all) in its own lane over the time axis, the trigger as
// a dashed line; -names names the pins (default pin.0, pin.1, ...).
// The trigger arms on fresh samples: those buffered before halscope
// started are skipped, and counted on stderr.
// Samples the sampler dropped during the capture are reported on stderr;
// their cycles are missing from the CSV. -timeout ends the wait for the
// trigger with status 1; Ctrl-C ends it with whatever was captured.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/examples/internal/outfile"
	"github.com/gortapi/gortapi/examples/internal/scope"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
)

type config struct {
	channel int
	trigger int
	edge    string
	level   float64
	pre     int
	count   int
	csv     string
	svg     string
	title   string
	names   string
	pins    string
	timeout time.Duration
	rt      *rtapi.Options
	shmDir  string
}

// MaxCapture bounds -n: a capture is kept in memory.
const MaxCapture = 10_000_000

func main() { os.Exit(command(os.Args[1:], os.Stdout, os.Stderr)) }

// command runs halscope with args until its capture is written, Ctrl-C
// or SIGTERM: its exit status (HACKING.md, "Examples: one command-line
// style").
func command(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("halscope", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[-c CHAN] [-trigger PIN -edge E -level X] [-pre N] [-n N] [-csv FILE] [-svg FILE]", "")
	fs.IntVar(&c.channel, "c", 0, "the sampler channel to read (sampler.CHAN)")
	fs.IntVar(&c.trigger, "trigger", 0, "the pin that triggers (sampler.CHAN.pin.PIN)")
	fs.StringVar(&c.edge, "edge", "rising", "rising, falling, high, low or auto")
	fs.Float64Var(&c.level, "level", 0.5, "the trigger level")
	fs.IntVar(&c.pre, "pre", -1, "samples before the trigger (default a tenth of -n)")
	fs.IntVar(&c.count, "n", 1000, "samples in the capture")
	fs.StringVar(&c.csv, "csv", "-", "write the CSV here (- for stdout, empty for none)")
	fs.StringVar(&c.svg, "svg", "", "write the SVG plot here")
	fs.StringVar(&c.title, "title", "", "the plot's title (default: the channel and trigger)")
	fs.StringVar(&c.names, "names", "", "comma-separated names of the pins, in cfg order")
	fs.StringVar(&c.pins, "pins", "", "comma-separated pins to plot (default all)")
	fs.DurationVar(&c.timeout, "timeout", 0, "give up waiting for the trigger after this long (0: wait)")
	c.rt = rtapi.RegisterShmFlags(fs)
	fs.StringVar(&c.shmDir, "shm-dir", "", "directory of the host's segments (default /dev/shm)")
	err := cli.Parse(fs, args)
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = run(ctx, stdout, stderr, c)
		stop()
	}
	return cli.Exit("halscope", stderr, err)
}

func run(ctx context.Context, stdout, stderr io.Writer, c config) error {
	edge, err := scope.ParseEdge(c.edge)
	if err != nil {
		return cli.Usagef("-edge: %v", err)
	}
	if c.count < 1 || c.count > MaxCapture {
		return cli.Usagef("-n %d: want 1 to %d", c.count, MaxCapture)
	}
	if c.pre < 0 {
		c.pre = c.count / 10
	}
	if c.pre >= c.count {
		return cli.Usagef("-pre %d: want fewer than -n %d", c.pre, c.count)
	}
	if c.channel < 0 || c.channel >= sampler.MaxChannels || c.timeout < 0 {
		return cli.Usagef("-c 0 to %d, -timeout >= 0", sampler.MaxChannels-1)
	}
	if math.IsNaN(c.level) {
		return cli.Usagef("-level NaN never triggers")
	}
	so, err := sampler.UsrArgs{RT: *c.rt, ShmDir: c.shmDir}.Shm()
	if err != nil {
		return err
	}
	rd, err := sampler.Attach(so, c.channel)
	if err != nil {
		return err
	}
	defer rd.Close()
	types := rd.Types()
	if c.trigger < 0 || c.trigger >= len(types) {
		return cli.Usagef("-trigger %d: channel %d has pins 0 to %d", c.trigger, c.channel, len(types)-1)
	}
	names, traces, err := chooseTraces(c.names, c.pins, len(types))
	if err != nil {
		return err
	}
	capt := scope.NewCapture(scope.Trigger{Pin: c.trigger, Edge: edge, Level: c.level}, c.pre, c.count, types)
	if n, first, last, err := capt.SkipStale(rd); err != nil {
		return err
	} else if n > 0 {
		fmt.Fprintf(stderr, "halscope: skipped %d stale samples (cycles %d to %d) buffered before the start\n", n, first, last)
	}
	var deadline time.Time
	if c.timeout > 0 {
		deadline = time.Now().Add(c.timeout)
	}
	for {
		if ctx.Err() != nil {
			break // Ctrl-C: write what there is
		}
		wait := time.Now().Add(100 * time.Millisecond)
		if capt.Fired < 0 && !deadline.IsZero() && deadline.Before(wait) {
			wait = deadline
		}
		s, err := rd.Next(wait)
		if errors.Is(err, rtapi.ErrTimeout) {
			if capt.Fired < 0 && !deadline.IsZero() && !time.Now().Before(deadline) {
				return fmt.Errorf("no trigger (pin.%d %s %g) within %v", c.trigger, edge, c.level, c.timeout)
			}
			continue
		}
		if err != nil {
			if capt.Fired < 0 {
				return err
			}
			fmt.Fprintln(stderr, "halscope:", err)
			break // the host ended: write what there is
		}
		if capt.Add(s) {
			break
		}
	}
	if capt.Fired < 0 {
		return fmt.Errorf("interrupted before the trigger")
	}
	if g := capt.Gaps(); g != 0 {
		fmt.Fprintf(stderr, "halscope: %d cycles are missing from the capture (the sampler dropped them or was disabled)\n", g)
	}
	if err := writeFile(c.csv, stdout, func(w io.Writer) error { return scope.WriteCSV(w, capt, names) }); err != nil {
		return err
	}
	title := c.title
	if title == "" {
		title = fmt.Sprintf("sampler.%d: %d samples, trigger pin.%d %s %g", c.channel, len(capt.Rows), c.trigger, edge, c.level)
	}
	return writeFile(c.svg, stdout, func(w io.Writer) error { return scope.WriteSVG(w, title, capt, traces) })
}

// chooseTraces reads -names and -pins: the names of the n pins and the
// traces to plot.
func chooseTraces(names, pins string, n int) ([]string, []scope.Trace, error) {
	all := make([]string, n)
	var given []string
	if names != "" {
		given = strings.Split(names, ",")
		if len(given) > n {
			return nil, nil, cli.Usagef("-names: %d names for %d pins", len(given), n)
		}
	}
	for i := range all {
		all[i] = "pin." + strconv.Itoa(i)
		if i < len(given) && given[i] != "" {
			all[i] = given[i]
		}
	}
	var traces []scope.Trace
	if pins == "" {
		for i := range n {
			traces = append(traces, scope.Trace{Name: all[i], Pin: i})
		}
		return all, traces, nil
	}
	for _, p := range strings.Split(pins, ",") {
		i, err := strconv.Atoi(p)
		if err != nil || i < 0 || i >= n {
			return nil, nil, cli.Usagef("-pins: %q is not a pin 0 to %d", p, n-1)
		}
		traces = append(traces, scope.Trace{Name: all[i], Pin: i})
	}
	return all, traces, nil
}

// writeFile writes with fn to path: nothing when path is empty, stdout
// when it is "-". A file is put at path only once written, replacing a
// symlink there rather than following it (examples/internal/outfile).
func writeFile(path string, stdout io.Writer, fn func(io.Writer) error) error {
	switch path {
	case "":
		return nil
	case "-":
		return fn(stdout)
	}
	f, err := outfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	if err := fn(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Commit()
}
