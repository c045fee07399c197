// Command halstreamer copies lines of values from standard input or a
// file into a streamer HAL component's FIFO, as LinuxCNC's halstreamer(1)
// does, so that the function streamer.CHAN puts one line a cycle onto
// the pins streamer.CHAN.pin.M:
//
//	halstreamer [-c CHAN] [-shm-dir DIR] [-rtapi.instance I] [-rtapi.shm-group G] [FILE]
//
// Each line holds one value per pin of the channel's cfg string,
// separated by white space: floats as C's strtod reads them, integers in
// decimal (strtol, strtoul), bits as 0 or 1; halsampler's output reads
// back. A line starting with # is skipped. A bad line is reported on
// standard error as "line L, field F: MESSAGE, skipping the line" (L and
// F from 0) and skipped. When the FIFO is full halstreamer waits for
// room. At the end of its input, or on SIGINT or SIGTERM while it waits,
// it exits 0; if the host exits while it waits, it says so and exits 1
// (LinuxCNC's would wait on).
//
// Its options and messages are LinuxCNC's (sampler.ParseUsrArgs): -c
// CHAN (or -cCHAN) picks the channel, 0 to 7 ("ERROR: invalid channel
// number 'X'"); any other option is "ERROR: unknown option 'X'"; more
// than one FILE is "ERROR: At most one filename may be specified"; all
// exit 1. A host whose FIFO cannot be opened is "hal_stream_attach:
// CAUSE", exit 1. The host's segments are named as every rtapi program's
// (rtapi.RegisterShmFlags): -rtapi.instance, else $RTAPI_INSTANCE;
// -rtapi.shm-group (or -group), else $RTAPI_SHM_GROUP; and -shm-dir, as
// halsampler's. -h prints the usage and exits 0. Unlike LinuxCNC's, a
// FILE that cannot be opened is an error (exit 1), not an empty input.
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
	"syscall"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stderr)
	stop()
	os.Exit(code)
}

// parseArgs reads args as LinuxCNC's halstreamer does, with the rtapi
// flags besides; it prints what it refuses on stderr.
func parseArgs(args []string, stderr io.Writer) (sampler.UsrArgs, error) {
	fs := flag.NewFlagSet("halstreamer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[-c CHAN] [-shm-dir DIR] [-rtapi.instance I] [-rtapi.shm-group G] [FILE]",
		"LinuxCNC's option: -c CHAN (or -cCHAN), the streamer channel to fill (streamer.CHAN), 0 to 7.\n"+
			"Lines of values come from FILE, or from standard input.")
	return sampler.ParseUsrArgs(fs, "c", sampler.MaxStreamChannels, args)
}

func run(ctx context.Context, args []string, stdin io.Reader, stderr io.Writer) int {
	c, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 1
	}
	in := stdin
	if c.File != "" {
		f, err := os.Open(c.File)
		if err != nil {
			fmt.Fprintf(stderr, "ERROR: cannot open '%s': %v\n", c.File, errors.Unwrap(err))
			return 1
		}
		defer f.Close()
		in = f
	}
	o, err := c.Shm()
	if err != nil {
		fmt.Fprintf(stderr, "halstreamer: %v\n", err)
		return 1
	}
	w, err := sampler.AttachWriter(o, c.Channel)
	if err != nil {
		fmt.Fprintf(stderr, "hal_stream_attach: %v\n", err)
		return 1
	}
	defer w.Close()
	if err := stream(ctx, w, in, stderr); err != nil {
		fmt.Fprintf(stderr, "halstreamer: %v\n", err)
		return 1
	}
	return 0
}

// stream is halstreamer's loop: one sample a line, as LinuxCNC's. It
// returns nil at the end of in or when ctx ends while it waits for room,
// and an error only when the FIFO is damaged.
func stream(ctx context.Context, w *sampler.Writer, in io.Reader, stderr io.Writer) error {
	types := w.Types()
	vals := make([]uint64, len(types))
	r := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	for line := 0; ; line++ {
		buf = fgets(r, buf[:0])
		if len(buf) == 0 {
			return nil // the end of the input
		}
		if buf[0] == '#' {
			continue
		}
		if field, msg := sampler.ParseStreamLine(types, buf, vals); msg != "" {
			fmt.Fprintf(stderr, "line %d, field %d: %s, skipping the line\n", line, field, msg)
			continue
		}
		if err := w.Write(ctx, vals); err != nil {
			if ctx.Err() != nil {
				return nil // SIGINT or SIGTERM while waiting: LinuxCNC exits 0
			}
			return err
		}
	}
}

// fgets appends to buf what C's fgets into a 4000-byte buffer reads: up
// to and including a newline, at most sampler.LineMax bytes.
func fgets(r *bufio.Reader, buf []byte) []byte {
	for len(buf) < sampler.LineMax {
		c, err := r.ReadByte()
		if err != nil {
			return buf // EOF, or a read error, which ends fgets' input too
		}
		buf = append(buf, c)
		if c == '\n' {
			break
		}
	}
	return buf
}
