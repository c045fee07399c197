// Command halstreamer copies lines of values from standard input or a
// file into a streamer HAL component's FIFO, as LinuxCNC's halstreamer(1)
// does, so that the function streamer.CHAN puts one line a cycle onto
// the pins streamer.CHAN.pin.M:
//
//	halstreamer [-c CHAN] [-rtapi.instance I] [-shm-dir DIR] [-group G] [FILE]
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
// Its options and messages are LinuxCNC's: -c CHAN (or -cCHAN) picks the
// channel, 0 to 7 ("ERROR: invalid channel number 'X'"); any other
// option is "ERROR: unknown option 'X'"; more than one FILE is "ERROR: At
// most one filename may be specified"; all exit 1. A host whose FIFO
// cannot be opened is "hal_stream_attach: CAUSE", exit 1. The gortapi
// flags -rtapi.instance (default $RTAPI_INSTANCE, else 0), -shm-dir and
// -group name the host's segments, as halsampler's do. Unlike LinuxCNC's,
// a FILE that cannot be opened is an error (exit 1), not an empty input.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/shm"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// config is what the command line gives.
type config struct {
	channel  int
	file     string
	instance int
	shmDir   string
	group    string
}

// parseArgs reads args as LinuxCNC's halstreamer does, plus the gortapi
// flags; msg is the error to print before exit 1.
func parseArgs(args []string, getenv func(string) string) (c config, msg string) {
	if s := getenv("RTAPI_INSTANCE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return c, fmt.Sprintf("ERROR: RTAPI_INSTANCE=%q is not an instance number", s)
		}
		c.instance = n
	}
	n := 0
	for ; n < len(args); n++ {
		a := args[n]
		if !strings.HasPrefix(a, "-") {
			break
		}
		if name, val, has, ok := gortapiFlag(a); ok {
			if !has {
				if n+1 >= len(args) {
					return c, fmt.Sprintf("ERROR: option '%s' needs a value", a)
				}
				n++
				val = args[n]
			}
			switch name {
			case "rtapi.instance":
				i, err := strconv.Atoi(val)
				if err != nil || i < 0 {
					return c, fmt.Sprintf("ERROR: invalid instance '%s'", val)
				}
				c.instance = i
			case "shm-dir":
				c.shmDir = val
			case "group", "rtapi.shm-group":
				c.group = val
			}
			continue
		}
		opt := a[1:]
		if opt == "" || opt[0] != 'c' {
			return c, fmt.Sprintf("ERROR: unknown option '%s'", opt)
		}
		// LinuxCNC: the value follows -c, or is the next argument if
		// there is one; strtol reads it, into an int.
		cp := opt[1:]
		if cp == "" && n+1 < len(args) {
			n++
			cp = args[n]
		} else if cp == "" {
			n++
		}
		s := []byte(cp)
		i := 0
		for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
			i++
		}
		v, end := strtol10(s, i)
		if end == i {
			end = 0 // no digits: strtol's end is the string's start
		}
		ch := int32(v)
		if end < len(s) || ch < 0 || ch >= sampler.MaxStreamChannels {
			return c, fmt.Sprintf("ERROR: invalid channel number '%s'", cp)
		}
		c.channel = int(ch)
	}
	if n < len(args) {
		if len(args) > n+1 {
			return c, "ERROR: At most one filename may be specified"
		}
		c.file = args[n]
	}
	return c, ""
}

// gortapiFlag recognises -NAME[=VALUE] or --NAME[=VALUE] for the
// gortapi flags, none of which LinuxCNC's halstreamer has.
func gortapiFlag(a string) (name, val string, has, ok bool) {
	s := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	name, val, has = strings.Cut(s, "=")
	switch name {
	case "rtapi.instance", "shm-dir", "group", "rtapi.shm-group":
		return name, val, has, true
	}
	return "", "", false, false
}

// strtol10 is C's strtol(s+i, &end, 10) on a 64-bit long: the value,
// saturated at the int64 limits, and the index after the digits (i when
// there are none).
func strtol10(s []byte, i int) (int64, int) {
	j, neg := i, false
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		neg = s[j] == '-'
		j++
	}
	if j >= len(s) || s[j] < '0' || s[j] > '9' {
		return 0, i
	}
	var v int64
	for ; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
		d := int64(s[j] - '0')
		switch {
		case v == math.MaxInt64 || v == math.MinInt64:
		case !neg && v > (math.MaxInt64-d)/10:
			v = math.MaxInt64
		case neg && v < (math.MinInt64+d)/10:
			v = math.MinInt64
		case neg:
			v = v*10 - d
		default:
			v = v*10 + d
		}
	}
	return v, j
}

func run(ctx context.Context, args []string, stdin io.Reader, stderr io.Writer, getenv func(string) string) int {
	c, msg := parseArgs(args, getenv)
	if msg != "" {
		fmt.Fprintln(stderr, msg)
		return 1
	}
	in := stdin
	if c.file != "" {
		f, err := os.Open(c.file)
		if err != nil {
			fmt.Fprintf(stderr, "ERROR: cannot open '%s': %v\n", c.file, errors.Unwrap(err))
			return 1
		}
		defer f.Close()
		in = f
	}
	w, err := sampler.AttachWriter(shm.Options{Dir: c.shmDir, Instance: c.instance, Group: c.group}, c.channel)
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
