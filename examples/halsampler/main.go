// Command halsampler prints what a sampler HAL component captures, one
// line per cycle, as LinuxCNC's halsampler(1) does:
//
//	halsampler [-c CHAN] [-n N] [-t] [-rtapi.instance I] [-shm-dir DIR]
//
// It reads channel CHAN (sampler.CHAN of "loadrt sampler cfg=...") of the
// host on instance I, from another process, while the host runs. Its
// standard output is LinuxCNC's byte for byte: each line holds the pins'
// values in cfg order, each followed by a space: bits as 0 or 1,
// integers in decimal, floats as printf's "%f" (six decimals). -t starts
// each line with the sample's number: the samples the sampler wrote
// before it (cycles it dropped or was disabled in are not counted; a
// reader that starts after a disabled spell counts from its first
// sample's cycle less the drops). A first sample that is not number 0
// (another reader took some) is preceded by the line "overrun", as
// LinuxCNC's. -n N exits after N samples; without it halsampler runs
// until Ctrl-C or until the host exits.
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
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

type config struct {
	channel  int
	count    int64
	tag      bool
	instance int
	shmDir   string
	group    string
}

func main() {
	var c config
	flag.IntVar(&c.channel, "c", 0, "the sampler channel to read (sampler.CHAN)")
	flag.Int64Var(&c.count, "n", 0, "exit after this many samples (0: run until Ctrl-C or the host exits)")
	flag.BoolVar(&c.tag, "t", false, "start each line with the cycle number")
	flag.IntVar(&c.instance, "rtapi.instance", 0, "the host's rtapi instance")
	flag.StringVar(&c.shmDir, "shm-dir", "", "directory of the host's segments (default /dev/shm)")
	flag.StringVar(&c.group, "group", "", "trust segments of this group (the host's -rtapi.shm-group)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: halsampler [-c CHAN] [-n N] [-t] [flags]")
		flag.PrintDefaults()
	}
	flag.Parse()
	cli.Main("halsampler", func(ctx context.Context) error { return run(ctx, os.Stdout, os.Stderr, c) })
}

func run(ctx context.Context, stdout, stderr io.Writer, c config) error {
	if flag.NArg() != 0 {
		return cli.Usagef("unexpected argument %q", flag.Arg(0))
	}
	if c.count < 0 || c.channel < 0 || c.channel >= sampler.MaxChannels || c.instance < 0 {
		return cli.Usagef("-n must be >= 0, -c 0 to %d, -rtapi.instance >= 0", sampler.MaxChannels-1)
	}
	rd, err := sampler.Attach(shm.Options{Dir: c.shmDir, Instance: c.instance, Group: c.group}, c.channel)
	if err != nil {
		return err
	}
	defer rd.Close()
	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	p := printer{types: rd.Types(), tag: c.tag, stderr: stderr}
	for n := int64(0); c.count == 0 || n < c.count; n++ {
		s, err := rd.TryNext()
		if errors.Is(err, ipc.ErrEmpty) {
			if err := out.Flush(); err != nil {
				return err
			}
			s, err = next(ctx, rd)
		}
		if ctx.Err() != nil || (errors.Is(err, rtapi.ErrClosed) && c.count == 0) {
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
	b = appendLinuxCNC(b, p.tag, p.written, p.types, s.Values)
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
