// Command twotasks is the README's program: two periodic tasks, at 1 kHz
// and 10 kHz, on the flavor this machine runs best, then their statistics.
//
//	go run ./examples/twotasks                          # auto flavor
//	go run ./examples/twotasks -rtapi.vanilla-fifo      # SCHED_FIFO + POSIX timers on a non-RT kernel
//	go run ./examples/twotasks -rtapi.flavor=posix -d 2s
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("twotasks", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[-d DURATION] [-rtapi.FLAG ...]", "")
	opts := rtapi.RegisterFlags(fs)
	d := fs.Duration("d", time.Second, "how long to run")
	err := cli.Parse(fs, args)
	if err == nil && *d <= 0 {
		err = cli.Usagef("-d %v: want a positive duration", *d)
	}
	if err == nil {
		err = twoTasks(stdout, *opts, *d)
	}
	return cli.Exit("twotasks", stderr, err)
}

// twoTasks runs the README's two tasks for d and prints their statistics.
func twoTasks(w io.Writer, opts rtapi.Options, d time.Duration) error {
	rt, err := rtapi.Open(opts)
	if err != nil {
		return err
	}
	defer rt.Close()
	fmt.Fprintf(w, "flavor %s (real-time: %v): %s\n", rt.Flavor().Name, rt.Flavor().RealTime, rt.Flavor().Why)

	var tasks []*rtapi.Task
	prio := rt.PrioHighest() // rate monotonic: the faster task gets the higher priority
	for _, p := range []time.Duration{100 * time.Microsecond, time.Millisecond} {
		spec := rtapi.TaskSpec{Name: fmt.Sprint("task-", p), Period: p, Priority: prio}
		prio = rt.PrioNextLower(prio)
		t, err := rt.NewPeriodicTask(spec, func(c *rtapi.Cycle) {})
		if err != nil {
			return err
		}
		if err := t.Start(); err != nil {
			return err
		}
		tasks = append(tasks, t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt) // Ctrl-C ends it early
	defer stop()
	if err := rt.Run(ctx); err != nil { // until ctx ends or a task fails; then stops the tasks
		return err
	}
	var stats []rtapi.Stats
	for _, t := range tasks {
		stats = append(stats, t.Stats())
	}
	return rtapi.WriteStats(w, stats...)
}
