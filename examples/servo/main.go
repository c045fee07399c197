package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/latencyfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

func main() { os.Exit(command(os.Args[1:], os.Stdout, os.Stderr)) }

// command runs the program with args: its exit status (HACKING.md,
// "Examples: one command-line style").
func command(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("servo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[-moves LIST] [-vel V] [-accel A] [-period P] [-jitter FILE] [-rtapi.FLAG ...]", "")
	opts := rtapi.RegisterFlags(fs)
	cfg := DefaultConfig()
	moves := fs.String("moves", "10,-10,3", "successive targets in radians, comma separated")
	fs.Float64Var(&cfg.Vel, "vel", cfg.Vel, "velocity limit, rad/s")
	fs.Float64Var(&cfg.Accel, "accel", cfg.Accel, "acceleration limit, rad/s²")
	period := fs.Duration("period", time.Millisecond, "servo thread period")
	jitter := fs.String("jitter", "", "on -rtapi.flavor=sim: replay the wake-up latency in FILE (a latency-test -json document, an hist.Snapshot as JSON or a cyclictest histogram file)")
	err := cli.Parse(fs, args)
	if err == nil {
		if cfg.Moves, err = parseMoves(*moves); err != nil {
			err = cli.UsageError{Err: err}
		}
	}
	if err == nil && (cfg.Vel <= 0 || cfg.Accel <= 0) {
		err = cli.Usagef("-vel and -accel must be positive: %w", rtapi.ErrInvalid)
	}
	if err == nil {
		err = run(stdout, *opts, cfg, *period, *jitter)
	}
	return cli.Exit("servo", stderr, err)
}

func parseMoves(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("%w: -moves: %q is not a number", rtapi.ErrInvalid, f)
		}
		out = append(out, v)
	}
	return out, nil
}

func run(w io.Writer, opts rtapi.Options, cfg Config, period time.Duration, jitterFile string) error {
	if cfg.Vel <= 0 || cfg.Accel <= 0 {
		return fmt.Errorf("%w: -vel and -accel must be positive", rtapi.ErrInvalid)
	}
	var jitter *hist.Snapshot
	if jitterFile != "" {
		h, err := loadHistogram(jitterFile, period)
		if err != nil {
			return err
		}
		jitter = &h
	}
	rt, err := rtapi.Open(opts)
	if err != nil {
		return err
	}
	defer rt.Close()
	fmt.Fprintf(w, "flavor %s (real-time: %v)\n", rt.Flavor().Name, rt.Flavor().RealTime)
	clock, simErr := sim.New(rt)
	if jitter != nil && simErr != nil {
		return fmt.Errorf("-jitter replays latency in simulation: add -rtapi.flavor=sim")
	}
	h, err := hal.New(rt, hal.Options{})
	if err != nil {
		return err
	}
	defer h.Close()
	th, err := h.NewThread("servo", period)
	if err != nil {
		return err
	}
	s := NewServo(cfg)
	if err := s.Install(h, "servo"); err != nil {
		return err
	}
	fmt.Fprintf(w, "moves %v rad at up to %g rad/s, %g rad/s², %v planned\n", cfg.Moves, cfg.Vel, cfg.Accel, cfg.Duration())
	if err := h.Start(); err != nil {
		return err
	}
	if simErr == nil {
		// Virtual time: the simulation runs the servo thread as fast as
		// the host allows, deterministically.
		if jitter != nil {
			j := sim.HistogramJitter(*jitter)
			p99, _ := jitter.Quantile(0.99) // a constant in (0, 1]: no error
			fmt.Fprintf(w, "jitter: %v, p99 %v\n", j, p99)
			if err := clock.SetTask(th.Task(), sim.TaskConfig{Jitter: j}); err != nil {
				return err
			}
		}
		if err := clock.RunUntil(s.Done, 2*cfg.Duration()+time.Second); err != nil {
			return errors.Join(err, th.Err(), h.Stop())
		}
	}
	for limit := time.Now().Add(2*cfg.Duration() + 5*time.Second); !s.Done(); {
		select {
		case <-th.Done():
			return errors.Join(th.Err(), h.Stop())
		default:
		}
		if time.Now().After(limit) {
			return fmt.Errorf("the moves did not finish by %v", limit)
		}
		time.Sleep(10 * time.Millisecond) // main goroutine: not a real-time path
	}
	if err := h.Stop(); err != nil {
		return err
	}
	report(w, rt.Flavor().Name, s, th)
	return nil
}

// report prints the following error, the HAL thread's per-function times
// and the rtapi task's statistics.
func report(w io.Writer, flavor string, s *Servo, th *hal.Thread) {
	f := &s.Following
	fmt.Fprintf(w, "following error: max %.3f mrad at t=%.3f s, rms %.3f mrad, final %.4f mrad over %d cycles\n",
		f.Max*1e3, f.AtMax, f.RMS()*1e3, f.Final*1e3, f.N)
	ts := th.Stats()
	ks := th.Task().Stats()
	// what the thread really ran with: the HAL's priority applies only
	// under a real-time policy, and on sim the scheduling is virtual
	sched := fmt.Sprintf("%s priority %d", ks.Policy, ks.Priority)
	switch {
	case ks.Policy == rtapi.PolicyVirtual:
		sched = fmt.Sprintf("virtual priority %d", ks.Priority)
	case ks.Policy != "SCHED_FIFO":
		sched = fmt.Sprintf("%s (not real-time: HAL priority %d not applied)", ks.Policy, ts.Priority)
	}
	fmt.Fprintf(w, "thread %s: period %v %s beat %d time %v tmax %v overruns %d\n",
		ts.Name, ts.Period, sched, ts.Beat, ts.Time, ts.TMax, ts.Overruns)
	for _, fs := range ts.Functs {
		fmt.Fprintf(w, "  %-16s time %-8v tmax %-8v calls %d overruns %d\n", fs.Name, fs.Time, fs.TMax, fs.Calls, fs.Overruns)
	}
	fmt.Fprintf(w, "task %s\n", ks)
}

// loadHistogram reads a wake-up latency histogram with
// latencyfile.ReadLatency: from a latency-test -json document (its task
// with the servo's period, else its first task), an hist.Snapshot as
// JSON or a cyclictest histogram file.
func loadHistogram(path string, period time.Duration) (hist.Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return hist.Snapshot{}, fmt.Errorf("-jitter: %w", err)
	}
	defer f.Close()
	h, err := latencyfile.ReadLatency(f, period)
	if err != nil {
		return h, fmt.Errorf("-jitter %s: %w", path, err)
	}
	return h, nil
}
