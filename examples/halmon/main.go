package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/examples/halhost/pins"
	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
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

func main() {
	var c config
	opts := rtapi.RegisterFlags(flag.CommandLine)
	flag.UintVar(&c.statsKey, "stats-key", pins.DefaultStatsKey, "shared-memory key of halhost's thread statistics")
	flag.UintVar(&c.pinsKey, "pins-key", pins.DefaultPinsKey, "shared-memory key of halhost's pins")
	flag.DurationVar(&c.interval, "interval", 500*time.Millisecond, "time between refreshes")
	flag.IntVar(&c.count, "count", 0, "exit after this many refreshes (0: until Ctrl-C)")
	flag.DurationVar(&c.wait, "wait", 0, "how long to wait for halhost to appear")
	flag.Parse()
	c.rtapi = *opts
	c.clear = cli.IsTerminal(os.Stdout)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, c); err != nil {
		log.Print("halmon: ", err)
		os.Exit(cli.ExitCode(err))
	}
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

	var table *pins.Table
	var mon *hal.Monitor
	deadline := time.Now().Add(c.wait)
	for {
		table, mon, err = attach(rt, c)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("no halhost running (%w); start it first: go run ./examples/halhost", err)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond): // not a real-time path
		}
	}
	defer func() { err = errors.Join(err, mon.Close(), table.Close()) }()

	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	var frame pins.Frame
	for n := 1; ; n++ {
		snap, err := mon.Read()
		if err != nil {
			return err
		}
		seq, err := table.Read(&frame)
		if err != nil {
			return err
		}
		show(w, c.clear, snap, table, &frame, seq)
		if snap.HostClosed || !mon.HostAlive() {
			fmt.Fprintf(w, "halmon: halhost (pid %d) has stopped; detaching\n", snap.HostPID)
			return nil
		}
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

func attach(rt *rtapi.RT, c config) (*pins.Table, *hal.Monitor, error) {
	mon, err := hal.OpenMonitor(hal.MonitorOptions{Key: uint32(c.statsKey), Instance: rt.Instance()})
	if err != nil {
		return nil, nil, err
	}
	table, err := pins.Attach(rt, uint32(c.pinsKey))
	if err != nil {
		mon.Close()
		return nil, nil, err
	}
	return table, mon, nil
}

// show prints one refresh: the host, its threads and functions, the pins
// — each as the servo thread last published it in a frame (one cycle's
// values together) and as it reads now (a thread that stopped no longer
// publishes frames; the base thread keeps writing its pins).
func show(w io.Writer, clear bool, s hal.Snapshot, t *pins.Table, f *pins.Frame, seq uint64) {
	if clear {
		fmt.Fprint(w, "\x1b[H\x1b[2J")
	} else {
		fmt.Fprintln(w, "---")
	}
	fmt.Fprintf(w, "halmon: host pid %d, base period %v, pins frame %d (servo cycle %d)\n",
		s.HostPID, s.BasePeriod, seq, f.Cycle)
	hal.WriteThreads(w, s.Threads)
	fmt.Fprintf(w, "pins:  %-22s %14s %14s\n", "", "frame", "live")
	for i, n := range t.Names() {
		live := math.NaN()
		if p, err := t.Pin(n); err == nil {
			live = p.Get()
		}
		fmt.Fprintf(w, "  %-27s %14.6f %14.6f\n", n, f.Values[i], live)
	}
}
