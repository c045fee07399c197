package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/rtapi/latencyfile"
)

// The canary (-canary): a cyclictest thread pinned to every online CPU at
// SCHED_FIFO 99 for the length of each round, on both sides. A C thread
// above every measured one, alone on its CPU's highest priority, is late
// only when the machine did not run it: a host that stopped the virtual
// CPU, a kernel section that kept it, or the kernel's fair server running
// starved ordinary threads. When it was as late as a side's worst
// wake-up in the same round, that wake-up is the machine's, not the
// side's own: C misbehaved the same way in the same run.

const (
	// canaryPriority is the canary's SCHED_FIFO priority: above every
	// measured thread (-p is at most 98), beside the runtime guard.
	canaryPriority = 99
	// canaryHistBound is its histograms' bound (cyclictest -h, µs): only
	// the maxima are read, which cyclictest keeps exactly past it.
	canaryHistBound = 1000
	// canaryFloor is the least worst wake-up machineStall attributes:
	// below it, a wake-up is ordinary scheduling, not a stall.
	canaryFloor = time.Millisecond
)

// canary is one round's canary process.
type canary struct {
	cmd  *exec.Cmd
	hist string
	out  strings.Builder
	done chan error
}

// canaryArgs is the canary's command line: one thread per online CPU,
// thread N pinned to CPU N (-a -t), every interval.
func canaryArgs(interval time.Duration, histFile string) []string {
	return []string{"-q", "-m", "-a", "-t", "-p", strconv.Itoa(canaryPriority),
		"-i", strconv.Itoa(int(interval / time.Microsecond)), "-h", strconv.Itoa(canaryHistBound),
		"--histfile=" + histFile}
}

// startCanary starts the canary, to run until stop.
func startCanary(cyclictest, dir string, interval time.Duration) (*canary, error) {
	c := &canary{hist: filepath.Join(dir, "canary.hist"), done: make(chan error, 1)}
	os.Remove(c.hist)
	c.cmd = exec.Command(cyclictest, canaryArgs(interval, c.hist)...)
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("canary: %w", err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	// Its threads lock memory and take their priority before the round
	// starts; not a real-time path.
	time.Sleep(100 * time.Millisecond)
	return c, nil
}

// canaryStopWait bounds how long stop waits for cyclictest to write its
// histograms after SIGINT.
const canaryStopWait = 10 * time.Second

// stop ends the canary and returns each CPU's worst wake-up, in the
// order of its threads (CPU 0 first).
func (c *canary) stop() ([]time.Duration, error) {
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	ctx, cancel := context.WithTimeout(context.Background(), canaryStopWait)
	defer cancel()
	select {
	case err := <-c.done:
		if err != nil {
			return nil, fmt.Errorf("canary: %w: %s", err, lastLine([]byte(c.out.String())))
		}
	case <-ctx.Done():
		_ = c.cmd.Process.Kill()
		<-c.done
		return nil, errors.New("canary: cyclictest did not end within 10 s of SIGINT")
	}
	f, err := os.Open(c.hist)
	if err != nil {
		return nil, fmt.Errorf("canary wrote no histogram: %w", err)
	}
	defer f.Close()
	hs, err := latencyfile.ReadHistfile(f)
	if err != nil {
		return nil, fmt.Errorf("canary histogram: %w", err)
	}
	if len(hs) == 0 {
		return nil, errors.New("canary histogram: no thread")
	}
	maxima := make([]time.Duration, len(hs))
	for i, h := range hs {
		maxima[i] = h.Max
	}
	return maxima, nil
}

// machineStall reports whether a round's worst wake-up, worst, is the
// machine's: at least canaryFloor, and the canary's worst wake-up in the
// same round on some CPU at least half of it. A lower bound on the
// machine's share (a stop is seen late by up to one canary period less
// than it lasted) that can also match a stall of the canary at another
// moment of the round.
func machineStall(worst time.Duration, canaryMax []time.Duration) bool {
	if worst < canaryFloor || len(canaryMax) == 0 {
		return false
	}
	return 2*slices.Max(canaryMax) >= worst
}

// startCanary starts a round's canary when -canary asks for one and
// SCHED_FIFO and cyclictest are at hand; nil otherwise, or when it cannot
// start (logged).
func (b *bench) startCanary() *canary {
	if b.s.canary == 0 || !b.fifo || b.tools.cyclictest == "" {
		return nil
	}
	c, err := startCanary(b.tools.cyclictest, b.dir, b.s.canary)
	if err != nil {
		b.logf("  %v", err)
		return nil
	}
	return c
}

// stopCanary ends c (nil: none) and returns each CPU's worst wake-up,
// nil when it failed (logged).
func (b *bench) stopCanary(c *canary) []time.Duration {
	if c == nil {
		return nil
	}
	m, err := c.stop()
	if err != nil {
		b.logf("  %v", err)
	}
	return m
}

// canaryRounds lists the canary's worst wake-up of each round (the
// largest over the CPUs), by variant; "" when no round had a canary.
func canaryRounds(g groupResult) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, r := range g.Rows {
		variant, _, _ := strings.Cut(r.Name, " · ")
		if seen[variant] {
			continue
		}
		var cells []string
		for _, run := range r.Runs {
			if len(run.Canary) > 0 {
				cells = append(cells, fmt.Sprintf("%.1f", ms(slices.Max(run.Canary))))
			} else {
				cells = append(cells, "–")
			}
		}
		if !slices.ContainsFunc(r.Runs, func(run runResult) bool { return len(run.Canary) > 0 }) {
			continue
		}
		seen[variant] = true
		if b.Len() == 0 {
			b.WriteString("\nThe canary's worst wake-up in each round, ms (a cyclictest thread at SCHED_FIFO 99 on every CPU, -canary):")
		} else {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s %s", variant, strings.Join(cells, ", "))
	}
	if b.Len() == 0 {
		return ""
	}
	return b.String() + ".\n"
}

// canaryMaxDetail says which rounds' maxima of rows num and den the
// canary matched (machineStall) and the ratio of the median maxima of
// the rounds it did not; "" when no round had a canary.
func canaryMaxDetail(g *groupResult, num, den string) string {
	n, d := findRow(g.Rows, num), findRow(g.Rows, den)
	if n == nil || d == nil {
		return ""
	}
	split := func(r *rowResult) (matched []string, rest []time.Duration, any bool) {
		for _, run := range r.Runs {
			if run.Err != "" {
				continue
			}
			any = any || len(run.Canary) > 0
			if machineStall(run.Summary.Max, run.Canary) {
				matched = append(matched, strconv.Itoa(run.Round))
			} else {
				rest = append(rest, run.Summary.Max)
			}
		}
		return matched, rest, any
	}
	nm, nr, nAny := split(n)
	dm, dr, dAny := split(d)
	if !nAny && !dAny {
		return ""
	}
	list := func(m []string) string {
		if len(m) == 0 {
			return "none"
		}
		return strings.Join(m, ", ")
	}
	s := fmt.Sprintf("rounds whose max the canary matched: gortapi %s, C %s", list(nm), list(dm))
	if len(nr) == 0 || len(dr) == 0 {
		return s + "; no round of one side left"
	}
	a, c := median(nr), median(dr)
	return s + fmt.Sprintf("; the others' max %.2f (%s / %s µs)", ratio(a, c), us(a), us(c))
}
