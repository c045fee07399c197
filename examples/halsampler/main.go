// Command halsampler prints what a sampler HAL component captures, one
// line per cycle, as LinuxCNC's halsampler(1) does:
//
//	halsampler [-c CHAN] [-n N] [-t] [-rtapi.instance I] [-shm-dir DIR]
//
// It reads channel CHAN (sampler.CHAN of "loadrt sampler cfg=...") of the
// host on instance I, from another process, while the host runs. Each line
// holds the pins' values in cfg order, separated by spaces: bits as 0 or
// 1, integers in decimal, floats in the shortest form that reads back
// exactly. -t starts each line with the cycle number. -n N exits after N
// samples; without it halsampler runs until Ctrl-C or until the host
// exits.
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
	"strconv"
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
	line    []byte
}

func (p *printer) print(w io.Writer, s sampler.Sample) error {
	p.gap(s)
	b := p.line[:0]
	if p.tag {
		b = strconv.AppendUint(b, s.Cycle, 10)
		b = append(b, ' ')
	}
	for i, v := range s.Values {
		if i > 0 {
			b = append(b, ' ')
		}
		b = cli.AppendValue(b, p.types[i], v)
	}
	b = append(b, '\n')
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
