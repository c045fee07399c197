package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halctl"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Segment keys halhost uses unless told otherwise: "HALP" for the pins
// (the HAL data segment: components, pins, parameters, signals), "HALH"
// for the thread statistics. examples/halrun's defaults differ ("HALD",
// "HALS"), so both run at once on one instance. examples/halmon uses the
// same defaults.
const (
	DefaultPinsKey  = 0x48414c50
	DefaultStatsKey = 0x48414c48
)

// halFile is the wiring halhost loads unless -hal names another file.
//
//go:embed halhost.hal
var halFile []byte

type config struct {
	rtapi      rtapi.Options
	base       time.Duration
	servo      time.Duration
	statsKey   uint
	pinsKey    uint
	halFile    string // -hal: load this file instead of the embedded one
	faultAfter time.Duration
	status     time.Duration
	metrics    string // -metrics-addr: serve Prometheus metrics there
}

func main() { os.Exit(command(os.Args[1:], os.Stdout, os.Stderr)) }

// command runs halhost with args until Ctrl-C or SIGTERM: its exit
// status (HACKING.md, "Examples: one command-line style").
func command(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("halhost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[-base P] [-servo P] [-hal FILE] [-fault-after D] [-status D] [-metrics-addr ADDR] [-rtapi.FLAG ...]", "")
	opts := rtapi.RegisterFlags(fs)
	fs.DurationVar(&c.base, "base", 100*time.Microsecond, "base thread period")
	fs.DurationVar(&c.servo, "servo", time.Millisecond, "servo thread period (rounded to a multiple of -base)")
	cli.KeyVar(fs, &c.statsKey, "stats-key", DefaultStatsKey, "shared-memory `key` of the thread statistics")
	cli.KeyVar(fs, &c.pinsKey, "pins-key", DefaultPinsKey, "shared-memory `key` of the pins (the HAL data segment: components, pins, parameters, signals)")
	fs.StringVar(&c.halFile, "hal", "", "load this .hal file instead of halhost's own (threads base and servo exist; halhost starts them)")
	fs.DurationVar(&c.faultAfter, "fault-after", 0, "make a servo function panic after this long (0: never)")
	fs.DurationVar(&c.status, "status", 0, "print the threads' timing this often (0: only at the end)")
	fs.StringVar(&c.metrics, "metrics-addr", "", "serve Prometheus metrics on this address, e.g. 127.0.0.1:9100 (path /metrics; empty: off)")
	err := cli.Parse(fs, args)
	if err == nil {
		c.rtapi = *opts
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = run(ctx, stdout, c)
		stop()
	}
	return cli.Exit("halhost", stderr, err)
}

func run(ctx context.Context, w io.Writer, c config) (err error) {
	if c.statsKey == 0 || c.statsKey > 0xffffffff || c.pinsKey == 0 || c.pinsKey > 0xffffffff || c.statsKey == c.pinsKey {
		return cli.Usagef("-stats-key and -pins-key must be two different non-zero 32-bit keys")
	}
	name, text := "halhost.hal", halFile
	if c.halFile != "" {
		if text, err = os.ReadFile(c.halFile); err != nil {
			return cli.UsageError{Err: err}
		}
		name = c.halFile
	}
	cmds, err := halfile.Parse(name, bytes.NewReader(text))
	if err != nil {
		return err // FILE:LINE: ...; nothing was created
	}
	rt, err := rtapi.Open(c.rtapi)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Close()) }()

	// Both segments are created exclusively: a second halhost on the same
	// keys is refused with the running one's pid.
	h, err := hal.New(rt, hal.Options{StatsKey: uint32(c.statsKey), DataKey: uint32(c.pinsKey), ShmGroup: c.rtapi.ShmGroup})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, h.Close()) }()
	base, err := h.NewThread("base", c.base)
	if err != nil {
		return cli.UsageError{Err: err} // the periods come from -base and -servo
	}
	servo, err := h.NewThread("servo", c.servo)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	if servo.Period() != servo.Requested() {
		fmt.Fprintf(w, "halhost: servo period %v rounded to %v, a multiple of the base period\n", servo.Requested(), servo.Period())
	}
	if err := h.Load(w, cmds); err != nil {
		return err
	}
	if c.faultAfter > 0 {
		if err := h.LoadRT("fault", "after="+strconv.FormatInt(int64(c.faultAfter), 10)); err != nil {
			return err
		}
		if err := h.AddFunct("fault.0.trip", "servo", hal.Last); err != nil {
			return err
		}
	}
	if !h.Running() {
		if err := h.Start(); err != nil {
			return err
		}
	}
	// Every halcmd command (setp, net, addf, ...) comes through the
	// instance's socket; another host of the instance may hold it. A
	// socket or directory refused as untrusted (another user's listener,
	// a directory others may write) stops halhost: it is an attack or a
	// broken set-up, not a host to share with.
	sock := halctl.SocketPath("", rt.Instance())
	if srv, err := halctl.Serve(h, sock, halctl.Options{Group: c.rtapi.ShmGroup}); errors.Is(err, os.ErrPermission) {
		return errors.Join(err, h.Stop())
	} else if err != nil {
		fmt.Fprintf(w, "halhost: no halcmd socket (%v); halmon still watches, halcmd cannot reach this host\n", err)
	} else {
		defer func() { err = errors.Join(err, srv.Close()) }()
	}
	// SIGUSR1 cuts the run into windows (marks): registered before
	// "ready", so a signal sent on seeing it is never the default's exit.
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	var m marks
	fmt.Fprintf(w, "halhost ready: flavor %s (real-time: %v), pid %d, pins %s, stats %s, halcmd socket %s; Ctrl-C to stop\n",
		rt.Flavor().Name, rt.Flavor().RealTime, os.Getpid(), h.DataSegment(), h.StatsSegment(), sock)
	hal.WriteThreads(w, h.Stats())
	writeScheduling(w, h)
	if c.metrics != "" {
		srv, err := serveMetrics(w, c.metrics, h)
		if err != nil {
			return errors.Join(err, h.Stop())
		}
		defer srv.Close()
	}

	var tick <-chan time.Time
	if c.status > 0 {
		t := time.NewTicker(c.status) // main goroutine, not a real-time path
		defer t.Stop()
		tick = t.C
	}
	baseDone, servoDone := base.Done(), servo.Done()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick:
			hal.WriteThreads(w, h.Stats())
		case <-usr1:
			m.mark(w, h)
		case <-baseDone:
			baseDone = nil
			reportStopped(w, base)
		case <-servoDone:
			servoDone = nil
			reportStopped(w, servo)
		}
	}
	fmt.Fprintln(w, "halhost: stopping")
	if err := h.Stop(); err != nil {
		var pe *hal.PanicError
		if !errors.As(err, &pe) {
			return err
		}
		// Already reported when the thread stopped.
	}
	stats := h.Stats()
	hal.WriteThreads(w, stats)
	writeLatency(w, h)
	hal.WriteVerdict(w, stats)
	fmt.Fprintln(w, "halhost: stopped, segments removed")
	return nil
}

// reportStopped says why a thread stopped while the host runs on.
func reportStopped(w io.Writer, th *hal.Thread) {
	var pe *hal.PanicError
	if err := th.Err(); errors.As(err, &pe) {
		fmt.Fprintf(w, "halhost: thread %s stopped: function %s panicked: %v%s; the other threads keep running\n",
			pe.Thread, pe.Funct, pe.Value, safeStates(th))
		fmt.Fprintf(os.Stderr, "%s\n", pe.Stack)
		return
	}
	fmt.Fprintf(w, "halhost: thread %s stopped: %v%s\n", th.Name(), th.Err(), safeStates(th))
}

// safeStates names the thread's safe states, which ran when it stopped.
func safeStates(th *hal.Thread) string {
	if s := th.SafeStates(); len(s) > 0 {
		return "; safe states run: " + strings.Join(s, ", ")
	}
	return ""
}
