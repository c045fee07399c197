package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// halhost's default segment keys (examples/halhost): "HALP" for the pins,
// "HALH" for the thread statistics.
const (
	defaultPinsKey  = 0x48414c50
	defaultStatsKey = 0x48414c48
)

type config struct {
	rtapi    rtapi.Options
	statsKey uint
	pinsKey  uint
	interval time.Duration
	count    int
	wait     time.Duration
	clear    bool
}

func main() { os.Exit(command(os.Args[1:], os.Stdout, os.Stderr)) }

// command runs halmon with args until -count refreshes, Ctrl-C or
// SIGTERM: its exit status (HACKING.md, "Examples: one command-line
// style").
func command(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("halmon", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[-interval D] [-count N] [-wait D] [-stats-key K] [-pins-key K] [-rtapi.FLAG ...]", "")
	// Only the settings that name the host's segments: halmon runs no
	// task, so the flavor, priorities and memory locking are its own.
	opts := rtapi.RegisterShmFlags(fs)
	cli.KeyVar(fs, &c.statsKey, "stats-key", defaultStatsKey, "shared-memory `key` of the host's thread statistics")
	cli.KeyVar(fs, &c.pinsKey, "pins-key", defaultPinsKey, "shared-memory `key` of the host's pins (its HAL data segment)")
	fs.DurationVar(&c.interval, "interval", 500*time.Millisecond, "time between refreshes")
	fs.IntVar(&c.count, "count", 0, "exit after this many refreshes (0: until Ctrl-C)")
	fs.DurationVar(&c.wait, "wait", 0, "how long to wait for the host to appear at start")
	err := cli.Parse(fs, args)
	if err == nil {
		c.rtapi = *opts
		f, ok := stdout.(*os.File)
		c.clear = ok && cli.IsTerminal(f)
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = run(ctx, stdout, c)
		stop()
	}
	return cli.Exit("halmon", stderr, err)
}

func run(ctx context.Context, w io.Writer, c config) (err error) {
	if c.interval <= 0 || c.count < 0 || c.wait < 0 {
		return cli.Usagef("-interval must be positive, -count and -wait not negative")
	}
	if c.statsKey == 0 || c.statsKey > 0xffffffff || c.pinsKey == 0 || c.pinsKey > 0xffffffff {
		return cli.Usagef("-stats-key and -pins-key must be non-zero 32-bit keys")
	}
	// The monitor is not real-time: it only needs rtapi for the segments.
	c.rtapi.Flavor = "posix"
	c.rtapi.LockMemory = rtapi.Off
	rt, err := rtapi.Open(c.rtapi)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Close()) }()

	h, err := attachWaiting(ctx, rt, c, c.wait)
	if err != nil || h == nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no halhost running (%w); start it first: go run ./examples/halhost", err)
		}
		return err // nil: interrupted while waiting
	}
	defer func() {
		if h != nil {
			err = errors.Join(err, h.Close())
		}
	}()

	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	for n := 0; ; {
		snap, rerr := h.Read()
		switch {
		case h.HostGone():
			fmt.Fprintf(w, "halmon: host gone (pid %d); waiting for it to come back\n", h.HostPID())
			err := h.Close()
			h = nil
			if err != nil {
				return err
			}
			if h, err = attachWaiting(ctx, rt, c, -1); err != nil || h == nil {
				return err
			}
			fmt.Fprintf(w, "halmon: host back (pid %d); attached again\n", h.HostPID())
			continue
		case rerr != nil:
			return rerr
		}
		n++
		show(w, c.clear, snap)
		if c.count > 0 && n >= c.count {
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(w, "halmon: interrupted; detaching")
			return nil
		case <-tick.C:
		}
	}
}

// attachWaiting attaches to the host's segments, read-only, retrying while
// they do not exist (or exist without a live host) for up to wait (< 0:
// until ctx ends). It returns nil, nil when ctx ends first.
func attachWaiting(ctx context.Context, rt *rtapi.RT, c config, wait time.Duration) (*hal.View, error) {
	deadline := time.Now().Add(wait)
	for {
		h, err := hal.OpenView(hal.ViewOptions{StatsKey: uint32(c.statsKey), DataKey: uint32(c.pinsKey),
			Instance: rt.Instance(), Group: rt.ShmGroup(), AllowUIDs: c.rtapi.ShmAllowUIDs})
		if err == nil && !h.HostGone() {
			return h, nil
		}
		if err == nil {
			// A dead host's segments, still there: wait for a new host.
			if cerr := h.Close(); cerr != nil {
				return nil, cerr
			}
			err = fmt.Errorf("the host of the segments is gone: %w", os.ErrNotExist)
		}
		// Not there yet, or there with its headers not yet written (a
		// host between creating its segments and filling them): wait.
		waitable := errors.Is(err, os.ErrNotExist) || errors.Is(err, shm.ErrNotInitialised)
		if !waitable || (wait >= 0 && time.Now().After(deadline)) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(50 * time.Millisecond): // not a real-time path
		}
	}
}

// show prints one refresh: the host, its threads and functions, then its
// pins with their live values and the signals they are on, names escaped
// (the segment's writers are not trusted).
func show(w io.Writer, clear bool, s hal.Snapshot) {
	if clear {
		fmt.Fprint(w, "\x1b[H\x1b[2J")
	} else {
		fmt.Fprintln(w, "---")
	}
	fmt.Fprintf(w, "halmon: host pid %d, base period %v\n", s.HostPID, s.BasePeriod)
	hal.WriteThreads(w, s.Threads)
	fmt.Fprintln(w, "pins:")
	for _, p := range s.Pins {
		sig := ""
		if p.Signal != "" {
			sig = "  " + dirArrow(p.Dir) + " " + names.Escape(p.Signal)
		}
		fmt.Fprintf(w, "  %-28s %-5s %-3s %14s%s\n", names.Escape(p.Name), p.Type, p.Dir, hal.FormatValue(p.Type, p.Value), sig)
	}
}

// dirArrow is halcmd's arrow for a pin on a signal.
func dirArrow(d hal.Dir) string {
	switch d {
	case hal.Out:
		return "==>"
	case hal.IO:
		return "<=>"
	}
	return "<=="
}
