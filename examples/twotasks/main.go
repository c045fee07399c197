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
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/gortapi/gortapi/rtapi"
)

func main() {
	opts := rtapi.RegisterFlags(flag.CommandLine)
	d := flag.Duration("d", time.Second, "how long to run")
	flag.Parse()
	if err := run(*opts, *d); err != nil {
		log.Fatal(err)
	}
}

func run(opts rtapi.Options, d time.Duration) error {
	rt, err := rtapi.Open(opts)
	if err != nil {
		return err
	}
	defer rt.Close()
	fmt.Printf("flavor %s (real-time: %v): %s\n", rt.Flavor().Name, rt.Flavor().RealTime, rt.Flavor().Why)

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
	return rtapi.WriteStats(os.Stdout, stats...)
}
