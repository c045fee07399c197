// Command halrun loads a LinuxCNC .hal file and runs it until Ctrl-C:
//
//	halrun [-rtapi flags] [-shm-dir DIR] servo.hal
//
// It parses the whole file first; a bad file is reported as FILE:LINE
// and nothing is created. It then makes the HAL on the flavor rtapi
// picks, with its components, pins and signals in a shared data segment
// and its thread statistics in a stats segment, runs the file (start
// takes effect after every other line succeeded) and listens for
// examples/halcmd on /dev/shm/gortapi-<instance>-hal.sock. Ctrl-C (or
// SIGTERM) stops the threads, removes the segments and the socket, and
// exits 0. Components come from rtapi/hal/comps.
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
	rt       rtapi.Options
}

func main() {
	var c config
	opts := rtapi.RegisterFlags(flag.CommandLine)
	flag.StringVar(&c.shmDir, "shm-dir", "", "directory of the segments and the socket (default /dev/shm)")
	cli.KeyVar(flag.CommandLine, &c.dataKey, "data-key", control.DefaultDataKey, "shared-memory key of the pins, parameters and signals")
	cli.KeyVar(flag.CommandLine, &c.statsKey, "stats-key", control.DefaultStatsKey, "shared-memory key of the thread statistics")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: halrun [flags] FILE.hal")
		flag.PrintDefaults()
	}
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c.rt = *opts
	if flag.NArg() == 1 {
		c.file = flag.Arg(0)
	}
	if err := run(ctx, os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "halrun:", err)
		os.Exit(cli.ExitCode(err))
	}
}

func run(ctx context.Context, out io.Writer, c config) error {
	if c.file == "" {
		return cli.Usagef("give one .hal file")
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
	<-ctx.Done()
	err = errors.Join(srv.Close(), h.Close())
	fmt.Fprintln(out, "halrun: stopped, segments removed")
	return err
}
