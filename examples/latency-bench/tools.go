package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/internal/reexec"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/latencyfile"
)

// tools are the external programs the benchmark compares against or
// loads the machine with; an empty path means missing.
type tools struct {
	cyclictest, ptsematest, stressNG string
	version                          string // rt-tests version
	notes                            []string
}

// findTools looks the tools up and, when allowed and possible (root with
// apt-get), installs the missing ones.
func findTools(install bool, logf func(string, ...any)) *tools {
	t := &tools{}
	look := func() {
		t.cyclictest, _ = exec.LookPath("cyclictest")
		t.ptsematest, _ = exec.LookPath("ptsematest")
		t.stressNG, _ = exec.LookPath("stress-ng")
	}
	look()
	var missing []string
	if t.cyclictest == "" || t.ptsematest == "" {
		missing = append(missing, "rt-tests")
	}
	if t.stressNG == "" {
		missing = append(missing, "stress-ng")
	}
	if len(missing) > 0 && install && os.Geteuid() == 0 {
		if apt, err := exec.LookPath("apt-get"); err == nil {
			logf("installing %s with apt-get", strings.Join(missing, " "))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			exec.CommandContext(ctx, apt, "update", "-qq").Run()
			cmd := exec.CommandContext(ctx, apt, append([]string{"install", "-y", "-qq"}, missing...)...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := cmd.CombinedOutput(); err != nil {
				logf("apt-get install failed: %v: %s", err, lastLine(out))
			}
			cancel()
			look()
		}
	}
	if t.cyclictest == "" {
		t.notes = append(t.notes, "cyclictest not found: its rows are skipped (install rt-tests: apt-get install rt-tests)")
	}
	if t.ptsematest == "" {
		t.notes = append(t.notes, "ptsematest not found: the task-switch comparison is gortapi only (install rt-tests)")
	}
	if t.stressNG == "" {
		t.notes = append(t.notes, "stress-ng not found: the external load is gortapi's own (cpu=2 and alloc in a separate process); apt-get install stress-ng for the standard one")
	}
	if t.cyclictest != "" {
		out, _ := exec.Command(t.cyclictest, "--help").CombinedOutput()
		if f := strings.Fields(string(out)); len(f) >= 3 && f[1] == "V" {
			t.version = f[2]
		}
	}
	return t
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// seconds rounds a duration up to whole seconds, cyclictest's -D unit.
func seconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// runCyclictest runs cyclictest with the benchmark's settings and reads
// its histogram file.
func runCyclictest(t *tools, dir string, prio, cpu int, interval, d time.Duration, posixTimers bool) (childResult, error) {
	histFile := filepath.Join(dir, "cyclictest.hist")
	os.Remove(histFile)
	args := []string{"-m", "-q", "-p", strconv.Itoa(prio), "-i", strconv.Itoa(int(interval / time.Microsecond)),
		"-h", strconv.Itoa(histBoundUS), "--histfile=" + histFile, "-D", strconv.Itoa(seconds(d))}
	if cpu >= 0 {
		args = append(args, "-a", strconv.Itoa(cpu))
	}
	if posixTimers {
		args = append(args, "-x")
	}
	out, err := runTool(d, t.cyclictest, args...)
	if err != nil {
		return childResult{}, fmt.Errorf("cyclictest %s: %w: %s", strings.Join(args, " "), err, lastLine(out))
	}
	f, err := os.Open(histFile)
	if err != nil {
		return childResult{}, fmt.Errorf("cyclictest wrote no histogram: %w", err)
	}
	defer f.Close()
	hs, err := latencyfile.ReadHistfile(f)
	if err != nil {
		if posixTimers && strings.Contains(err.Error(), "implausible") {
			return childResult{}, fmt.Errorf("cyclictest -x lost its own schedule after a missed period and " +
				"recorded negative latencies (printed unsigned); round dropped")
		}
		return childResult{}, fmt.Errorf("cyclictest histogram: %w", err)
	}
	wake := "nanosleep"
	if posixTimers {
		wake = "posix-timer"
	}
	return childResult{Latency: hs[0], Policy: "SCHED_FIFO", Wake: wake, Flavor: "cyclictest", Cycles: hs[0].Count}, nil
}

// ptsematestJSON is the part of ptsematest --json the benchmark reads.
type ptsematestJSON struct {
	Thread map[string]struct {
		Sender struct {
			Samples int64 `json:"samples"`
		} `json:"sender"`
		Receiver struct {
			Min float64 `json:"min"`
			Avg float64 `json:"avg"`
			Max float64 `json:"max"`
		} `json:"receiver"`
	} `json:"thread"`
}

// runPtsematest runs one ptsematest pair. ptsematest reports only min,
// avg and max (µs); the snapshot carries those, without buckets.
func runPtsematest(t *tools, dir string, prio, cpu int, interval, d time.Duration) (childResult, error) {
	jsonFile := filepath.Join(dir, "ptsematest.json")
	os.Remove(jsonFile)
	args := []string{"-q", "-t", "1", "-p", strconv.Itoa(prio), "-i", strconv.Itoa(int(interval / time.Microsecond)),
		"-D", strconv.Itoa(seconds(d)), "--json=" + jsonFile}
	if cpu >= 0 {
		args = append(args, "-a", strconv.Itoa(cpu))
	}
	out, err := runTool(d, t.ptsematest, args...)
	if err != nil {
		return childResult{}, fmt.Errorf("ptsematest: %w: %s", err, lastLine(out))
	}
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		return childResult{}, err
	}
	var doc ptsematestJSON
	if err := json.Unmarshal(data, &doc); err != nil {
		return childResult{}, fmt.Errorf("ptsematest json: %w", err)
	}
	th, ok := doc.Thread["0"]
	if !ok {
		return childResult{}, fmt.Errorf("ptsematest json has no thread 0")
	}
	n := th.Sender.Samples
	h := hist.Snapshot{Width: time.Microsecond, Count: n,
		Min: time.Duration(th.Receiver.Min * 1000), Max: time.Duration(th.Receiver.Max * 1000), Sum: time.Duration(th.Receiver.Avg*1000) * time.Duration(n)}
	return childResult{Latency: h, Policy: "SCHED_FIFO", Flavor: "ptsematest", Cycles: n, Note: "min/avg/max only"}, nil
}

// childRole is the role (internal/reexec) of this program's measuring
// and load children; the one argument is their childSpec as JSON.
const childRole = "latency-bench"

// childGrace is how long past its run a measuring child may take to end.
var childGrace = 30 * time.Second

// errChildHung is measure's error for a child that did not end in time;
// hungOutput gets its output.
var (
	errChildHung           = errors.New("did not end in time")
	hungOutput   io.Writer = os.Stderr
)

// measure runs a child of this program for spec (JSON), which should
// end by itself after d. A child still running childGrace later is sent
// SIGQUIT, which makes a Go program print its goroutines' stacks and
// exit (SIGKILL 10 s later if not): its output, stacks included, goes to
// standard error, and the error is errChildHung.
func measure(d time.Duration, spec string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d+childGrace)
	defer cancel()
	cmd := reexec.CommandContext(ctx, childRole, spec)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		fmt.Fprintf(hungOutput, "latency-bench: a child did not end within %v of its run; its output:\n%s\n", childGrace, out)
		return out, fmt.Errorf("%w (%v past its run; its stacks are on standard error): %w", errChildHung, childGrace, err)
	}
	return out, err
}

// runTool runs a measuring tool that should end by itself after d.
func runTool(d time.Duration, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// background is a load running in another process for the length of a
// group of runs.
type background struct {
	cmd  *exec.Cmd
	desc string
	next *background // another load stopped with this one
}

// startStress starts stress-ng (CPU, memory and timer stressors on every
// CPU), or, without it, a child of this program spinning and allocating.
func startStress(t *tools) (*background, error) {
	if t.stressNG != "" {
		args := []string{"--cpu", "0", "--cpu-load", "80", "--vm", "1", "--vm-bytes", "128M", "--hdd", "1", "--hdd-bytes", "64M", "--quiet"}
		return startBackground(exec.Command(t.stressNG, args...), "stress-ng "+strings.Join(args, " "))
	}
	return startLoadChild([]string{"cpu=2", "alloc=200MB/s"})
}

// startLoadChild runs latency.StartLoads in a separate process.
func startLoadChild(loads []string) (*background, error) {
	spec, _ := json.Marshal(childSpec{Kind: "load", Loads: loads})
	return startBackground(reexec.Command(childRole, string(spec)), "separate process: "+strings.Join(loads, " "))
}

// startBackground starts cmd in a process group of its own.
func startBackground(cmd *exec.Cmd, desc string) (*background, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", desc, err)
	}
	time.Sleep(500 * time.Millisecond) // let it ramp up; not a real-time path
	return &background{cmd: cmd, desc: desc}, nil
}

// stop ends the load and its children (its own process group only).
func (b *background) stop() {
	if b == nil || b.cmd.Process == nil {
		return
	}
	defer b.next.stop()
	pgid := b.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
}
