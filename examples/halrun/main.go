// Command halrun loads a LinuxCNC .hal file and runs it until Ctrl-C:
//
//	halrun [-rtapi flags] [-shm-dir DIR] [-fault-after DURATION] servo.hal
//
// It parses the whole file first; a bad file is reported as FILE:LINE
// and nothing is created. It then makes the HAL on the flavor rtapi
// picks, with its components, pins and signals in a shared data segment
// and its thread statistics in a stats segment, runs the file (start
// takes effect after every other line succeeded) and listens for
// examples/halcmd on gortapi-<instance>-hal.sock in -shm-dir, or by default
// in /run/gortapi (root) or $XDG_RUNTIME_DIR/gortapi (control.SocketPath),
// a directory no other user may write. Ctrl-C (or
// SIGTERM) stops the threads, removes the segments and the socket, and
// exits 0. Components come from rtapi/hal/comps.
//
// -fault-after 3s injects a fault into every thread 3 s after the file
// was run: a function at the head of each chain panics, the thread fails
// and its safe states run (the file's "safep THREAD PIN VALUE" lines), so
// that examples/halcmd or halmon shows the pins at their safe values.
// halrun keeps serving until Ctrl-C; the injected faults are not an
// error of its exit. examples/halhost gets the same flag once its
// rewrite is merged.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps"
	"github.com/gortapi/gortapi/rtapi/hal/control"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

type config struct {
	file     string
	shmDir   string
	dataKey  uint
	statsKey uint
	// faultAfter: inject a fault into every thread this long after the
	// file ran; 0: never.
	faultAfter time.Duration
	rt         rtapi.Options
}

func main() {
	var c config
	opts := rtapi.RegisterFlags(flag.CommandLine)
	flag.StringVar(&c.shmDir, "shm-dir", "", "directory of the segments and the socket, which only this user or root may write (default: segments in /dev/shm, the socket in /run/gortapi for root, $XDG_RUNTIME_DIR/gortapi otherwise)")
	cli.KeyVar(flag.CommandLine, &c.dataKey, "data-key", control.DefaultDataKey, "shared-memory key of the pins, parameters and signals")
	cli.KeyVar(flag.CommandLine, &c.statsKey, "stats-key", control.DefaultStatsKey, "shared-memory key of the thread statistics")
	flag.DurationVar(&c.faultAfter, "fault-after", 0,
		"inject a fault into every thread after this time, so that the file's safe states (safep) run; 0: never")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: halrun [flags] FILE.hal")
		flag.PrintDefaults()
	}
	flag.Parse()
	c.rt = *opts
	if flag.NArg() == 1 {
		c.file = flag.Arg(0)
	}
	cli.Main("halrun", func(ctx context.Context) error { return run(ctx, os.Stdout, c) })
}

func run(ctx context.Context, out io.Writer, c config) error {
	if c.file == "" {
		return cli.Usagef("give one .hal file")
	}
	if c.faultAfter < 0 {
		return cli.Usagef("-fault-after must not be negative")
	}
	if c.dataKey == 0 || c.statsKey == 0 || c.dataKey > 0xffffffff || c.statsKey > 0xffffffff || c.dataKey == c.statsKey {
		return cli.Usagef("-data-key and -stats-key must be two different non-zero 32-bit keys")
	}
	f, err := os.Open(c.file)
	if err != nil {
		return err
	}
	cmds, err := halfile.Parse(c.file, f)
	f.Close()
	if err != nil {
		return err // FILE:LINE: ...; nothing was created
	}
	rt, err := rtapi.Open(c.rt)
	if err != nil {
		return err
	}
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{DataKey: uint32(c.dataKey), StatsKey: uint32(c.statsKey),
		ShmDir: c.shmDir, ShmGroup: c.rt.ShmGroup})
	if err != nil {
		return err
	}
	if err := h.Load(out, cmds); err != nil {
		return errors.Join(err, h.Close())
	}
	faulted, err := injectFaults(h, c.faultAfter)
	if err != nil {
		return errors.Join(err, h.Close())
	}
	srv, err := control.Serve(h, control.SocketPath(c.shmDir, rt.Instance()), control.Options{Group: c.rt.ShmGroup})
	if err != nil {
		return errors.Join(err, h.Close())
	}
	state := "stopped (the file has no start)"
	if h.Running() {
		state = "running"
	}
	fmt.Fprintf(out, "halrun: %s loaded on flavor %s, threads %s; halcmd -rtapi.instance %d talks to it; Ctrl-C ends\n",
		c.file, rt.Flavor().Name, state, rt.Instance())
	select {
	case <-ctx.Done():
	case names := <-faulted:
		fmt.Fprintf(out, "halrun: injected a fault after %v: threads %s failed, their safe states ran\n",
			c.faultAfter, strings.Join(names, ", "))
		<-ctx.Done()
	}
	err = errors.Join(srv.Close(), withoutInjected(h.Close()))
	fmt.Fprintln(out, "halrun: stopped, segments removed")
	return err
}

// errInjected is the panic value of an injected fault.
var errInjected = errors.New("halrun: injected fault (-fault-after)")

// injectFaults puts a function at the head of every thread's chain that
// panics once after has passed. The channel gets the threads' names once
// they have all failed. after 0 injects nothing.
func injectFaults(h *hal.HAL, after time.Duration) (<-chan []string, error) {
	if after == 0 {
		return nil, nil
	}
	var fire atomic.Bool
	threads := h.Threads()
	for _, th := range threads {
		name := "halrun.inject-fault." + th.Name()
		if _, err := h.Export(name, func(time.Duration, int64) {
			if fire.Load() {
				panic(errInjected)
			}
		}); err != nil {
			return nil, err
		}
		if err := h.AddFunct(name, th.Name(), hal.First); err != nil {
			return nil, err
		}
	}
	faulted := make(chan []string, 1)
	time.AfterFunc(after, func() {
		fire.Store(true)
		var names []string
		for _, th := range threads {
			<-th.Done()
			names = append(names, th.Name())
		}
		faulted <- names
	})
	return faulted, nil
}

// withoutInjected drops the injected faults from the errors the threads
// ended with.
func withoutInjected(err error) error {
	var kept []error
	for _, e := range flatten(err) {
		var pe *hal.PanicError
		if errors.As(e, &pe) && pe.Value == errInjected {
			continue
		}
		kept = append(kept, e)
	}
	return errors.Join(kept...)
}

func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
