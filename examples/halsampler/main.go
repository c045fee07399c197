// Command halsampler prints what a sampler HAL component captures, one
// line per cycle, as LinuxCNC's halsampler(1) does:
//
//	halsampler [-c CHAN] [-n N] [-t] [-shm-dir DIR] [-rtapi.instance I] [-rtapi.shm-group G] [FILE]
//
// It reads channel CHAN (sampler.CHAN of "loadrt sampler cfg=...") of the
// host on instance I, from another process, while the host runs. The
// instance and group come as every rtapi program's do
// (rtapi.RegisterShmFlags): the flag, else $RTAPI_INSTANCE and
// $RTAPI_SHM_GROUP, so halrun's loadusr needs no flags. Its
// standard output, or FILE (created or truncated, as LinuxCNC's), is
// LinuxCNC's byte for byte: each line holds the pins'
// values in cfg order, each followed by a space: bits as 0 or 1,
// integers in decimal, floats as printf's "%f" (six decimals). -t starts
// each line with the sample's number: the samples the sampler wrote
// before it (cycles it dropped or was disabled in are not counted; a
// reader that starts after a disabled spell counts from its first
// sample's cycle less the drops). A first sample that is not number 0
// (another reader took some) is preceded by the line "overrun", as
// LinuxCNC's. -n N exits after N samples (-n 0 at once); without it
// halsampler runs until Ctrl-C or until the host exits.
//
// Its options and messages are LinuxCNC's (sampler.ParseUsrArgs): -c
// CHAN or -cCHAN, -n N or -nN, -t; "ERROR: invalid channel number 'X'",
// "ERROR: invalid sample count 'X'", "ERROR: unknown option 'X'", "ERROR:
// At most one filename may be specified", each exit 1. -h prints the
// usage and exits 0. Other failures print "halsampler: CAUSE" and exit 1.
//
// Lines are never skipped silently: when the sampler dropped samples
// because the ring was full (halsampler read too slowly, or started after
// the ring filled), or was disabled, halsampler says so on stderr, with
// the cycles missing, and goes on. A ring that the host did not write
// (a damaged segment) is reported and ends it with status 1.
//
// examples/halscope makes a triggered capture and plot of the same ring.
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
	"strconv"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/ipc"
)

func main() { os.Exit(command(os.Args[1:], os.Stdout, os.Stderr)) }

// command runs halsampler with args until -n samples, Ctrl-C, SIGTERM or
// the host's end: its exit status, 1 for a command line LinuxCNC's
// refuses, with its message.
func command(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("halsampler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[-c CHAN] [-n N] [-t] [-shm-dir DIR] [-rtapi.instance I] [-rtapi.shm-group G] [FILE]",
		"LinuxCNC's options: -c CHAN (or -cCHAN), the sampler channel to read (sampler.CHAN);\n"+
			"-n N (or -nN), exit after N samples; -t, start each line with the sample's number.\n"+
			"Lines go to FILE, or to standard output.")
	c, err := sampler.ParseUsrArgs(fs, "cnt", sampler.MaxChannels, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 1
	}
	if c.File != "" {
		// LinuxCNC's: open(FILE, O_WRONLY|O_CREAT|O_TRUNC, 0666) as stdout,
		// before the host is looked for.
		f, err := os.OpenFile(c.File, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			fmt.Fprintf(stderr, "ERROR: cannot open '%s': %v\n", c.File, errors.Unwrap(err))
			return 1
		}
		defer f.Close()
		stdout = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, stdout, stderr, c)
	stop()
	return cli.Exit("halsampler", stderr, err)
}

func run(ctx context.Context, stdout, stderr io.Writer, c sampler.UsrArgs) error {
	o, err := c.Shm()
	if err != nil {
		return err
	}
	rd, err := sampler.Attach(o, c.Channel)
	if err != nil {
		return err
	}
	defer rd.Close()
	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	p := printer{types: rd.Types(), tag: c.Tag, stderr: stderr}
	for n := int64(0); c.Count < 0 || n < c.Count; n++ {
		s, err := rd.TryNext()
		if errors.Is(err, ipc.ErrEmpty) {
			if err := out.Flush(); err != nil {
				return err
			}
			s, err = next(ctx, rd)
		}
		if ctx.Err() != nil || (errors.Is(err, rtapi.ErrClosed) && c.Count < 0) {
			return nil // Ctrl-C, or the host ended the run
		}
		if err != nil {
			return fmt.Errorf("after %d samples: %w", n, err)
		}
		if err := p.print(out, s); err != nil {
			return err
		}
	}
	return nil
}

// next waits for a sample, a tenth of a second at a time so that Ctrl-C
// is seen.
func next(ctx context.Context, rd *sampler.Reader) (sampler.Sample, error) {
	for {
		if ctx.Err() != nil {
			return sampler.Sample{}, rtapi.ErrClosed
		}
		s, err := rd.Next(time.Now().Add(100 * time.Millisecond))
		if !errors.Is(err, rtapi.ErrTimeout) {
			return s, err
		}
	}
}

// printer writes samples as lines and reports the gaps between them.
type printer struct {
	types   []hal.Type
	tag     bool
	stderr  io.Writer
	started bool
	last    sampler.Sample // Cycle and Dropped of the previous sample
	written uint32         // LinuxCNC's number of this sample, from 0
	line    []byte
}

func (p *printer) print(w io.Writer, s sampler.Sample) error {
	first := !p.started
	p.gap(s)
	b := p.line[:0]
	if first {
		// LinuxCNC numbers the samples the sampler wrote; this reader's
		// first is number Cycle-Dropped (no cycle was disabled before
		// it), and one already read by another reader is an "overrun".
		p.written = uint32(s.Cycle - s.Dropped)
		if p.written != 0 {
			b = append(b, "overrun\n"...)
		}
	}
	// LinuxCNC's line: with -t the number ("%u "), then each value and a
	// space (sampler.AppendLinuxCNC), then a newline.
	if p.tag {
		b = strconv.AppendUint(b, uint64(p.written), 10)
		b = append(b, ' ')
	}
	for i, v := range s.Values {
		b = sampler.AppendLinuxCNC(b, p.types[i], v)
	}
	b = append(b, '\n')
	p.written++
	p.line = b
	_, err := w.Write(b)
	return err
}

// gap reports on stderr what lies between the previous sample and s:
// samples dropped (the ring was full) and cycles not sampled (disabled).
func (p *printer) gap(s sampler.Sample) {
	prev := p.last
	p.last = sampler.Sample{Cycle: s.Cycle, Dropped: s.Dropped}
	if !p.started {
		p.started = true
		if s.Dropped != 0 {
			fmt.Fprintf(p.stderr, "halsampler: overrun: %d samples were dropped before cycle %d, before this reader began\n", s.Dropped, s.Cycle)
		}
		return
	}
	dropped := s.Dropped - prev.Dropped
	missing := s.Cycle - prev.Cycle - 1
	if s.Cycle <= prev.Cycle || s.Dropped < prev.Dropped {
		fmt.Fprintf(p.stderr, "halsampler: cycle %d (%d dropped) after cycle %d (%d dropped): the sampler was reloaded or the ring damaged\n",
			s.Cycle, s.Dropped, prev.Cycle, prev.Dropped)
		return
	}
	if dropped != 0 {
		fmt.Fprintf(p.stderr, "halsampler: overrun: %d samples dropped between cycles %d and %d (the ring was full)\n", dropped, prev.Cycle, s.Cycle)
	}
	if missing > dropped {
		fmt.Fprintf(p.stderr, "halsampler: %d cycles between %d and %d not sampled (sampler disabled)\n", missing-dropped, prev.Cycle, s.Cycle)
	}
}
