package main

import (
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/internal/rttest"
)

// -canary takes a period from 100 µs to 1 s, or 0 for none, and refuses
// anything else with the flag's name.
func TestParseCanary(t *testing.T) {
	t.Parallel()
	for arg, want := range map[string]time.Duration{"0": 0, "0s": 0, "1000": time.Millisecond, "1ms": time.Millisecond, "100us": 100 * time.Microsecond, "1s": time.Second} {
		s, err := parse([]string{"-canary", arg}, io.Discard)
		if err != nil || s.canary != want {
			t.Errorf("-canary %s: %v, %v; want %v", arg, s, err, want)
		}
	}
	s, err := parse(nil, io.Discard)
	if err != nil || s.canary != 0 {
		t.Errorf("default: %v %v; want no canary", s, err)
	}
	for _, arg := range []string{"50us", "2s", "-1ms", "x", ""} {
		if _, err := parse([]string{"-canary", arg}, io.Discard); err == nil || !strings.Contains(err.Error(), "-canary") {
			t.Errorf("-canary %q: %v, want an error naming -canary", arg, err)
		}
	}
}

// The canary is one cyclictest thread per CPU, pinned, at FIFO 99.
func TestCanaryArgs(t *testing.T) {
	t.Parallel()
	got := strings.Join(canaryArgs(time.Millisecond, "/tmp/c.hist"), " ")
	if want := "-q -m -a -t -p 99 -i 1000 -h 1000 --histfile=/tmp/c.hist"; got != want {
		t.Errorf("args %q, want %q", got, want)
	}
}

func TestMachineStall(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, c := range []struct {
		worst  time.Duration
		canary []time.Duration
		want   bool
	}{
		{8 * ms, []time.Duration{100 * time.Microsecond, 4 * ms}, true},   // half of it on one CPU
		{8 * ms, []time.Duration{3900 * time.Microsecond, 3 * ms}, false}, // under half
		{100 * ms, []time.Duration{99 * ms}, true},
		{900 * time.Microsecond, []time.Duration{ms}, false}, // under the floor: not a stall
		{8 * ms, nil, false}, // no canary
	} {
		if got := machineStall(c.worst, c.canary); got != c.want {
			t.Errorf("machineStall(%v, %v) = %v, want %v", c.worst, c.canary, got, c.want)
		}
	}
}

// The goal's detail names the rounds whose max the canary matched, per
// side, and the ratio of the other rounds' median maxima.
func TestCanaryMaxDetail(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	run := func(round int, max, canary time.Duration) runResult {
		return runResult{Round: round, Summary: latency.Summary{Max: max}, Canary: []time.Duration{ms / 10, canary}}
	}
	g := &groupResult{Rows: []rowResult{
		{Name: "gortapi · 50µs", Runs: []runResult{run(1, 92*ms, 90*ms), run(2, 2*ms, 8*ms), run(3, 3*ms, ms/5), {Round: 4, Err: "boom"}}},
		{Name: "cyclictest ×3 · 50µs", Runs: []runResult{run(1, 4*ms, ms/5), run(2, 9*ms, 8*ms), run(3, 2*ms, ms/5)}},
	}}
	got := canaryMaxDetail(g, "gortapi · 50µs", "cyclictest ×3 · 50µs")
	want := "rounds whose max the canary matched: gortapi 1, 2, C 2; the others' max 1.00 (3000.0 / 3000.0 µs)"
	if got != want {
		t.Errorf("detail\n%q\nwant\n%q", got, want)
	}
	g.Rows[1].Runs = g.Rows[1].Runs[1:2] // C's only round matched
	if got := canaryMaxDetail(g, "gortapi · 50µs", "cyclictest ×3 · 50µs"); !strings.HasSuffix(got, "no round of one side left") {
		t.Errorf("detail %q", got)
	}
	for i := range g.Rows {
		for j := range g.Rows[i].Runs {
			g.Rows[i].Runs[j].Canary = nil
		}
	}
	if got := canaryMaxDetail(g, "gortapi · 50µs", "cyclictest ×3 · 50µs"); got != "" {
		t.Errorf("no canary: %q", got)
	}
	if got := canaryMaxDetail(g, "gortapi · 50µs", "nothing"); got != "" {
		t.Errorf("no row: %q", got)
	}
}

// The report lists each variant's rounds once, whatever its task rows.
func TestCanaryRounds(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	g := groupResult{Rows: []rowResult{
		{Name: "gortapi · 50µs", Runs: []runResult{{Round: 1, Canary: []time.Duration{ms, 8 * ms}}, {Round: 2}}},
		{Name: "gortapi · 550µs", Runs: []runResult{{Round: 1, Canary: []time.Duration{ms, 8 * ms}}, {Round: 2}}},
		{Name: "cyclictest ×3 · 50µs", Runs: []runResult{{Round: 1, Canary: []time.Duration{ms / 2}}, {Round: 2, Canary: []time.Duration{ms / 2}}}},
		{Name: "other", Runs: []runResult{{Round: 1}}},
	}}
	want := "\nThe canary's worst wake-up in each round, ms (a cyclictest thread at SCHED_FIFO 99 on every CPU, -canary):" +
		" gortapi 8.0, –; cyclictest ×3 0.5, 0.5.\n"
	if got := canaryRounds(g); got != want {
		t.Errorf("canaryRounds\n%q\nwant\n%q", got, want)
	}
	if got := canaryRounds(groupResult{Rows: g.Rows[3:]}); got != "" {
		t.Errorf("no canary: %q", got)
	}
}

// A real canary: cyclictest at FIFO 99 on every CPU, stopped by SIGINT,
// reports one worst wake-up per CPU.
func TestCanaryRuns(t *testing.T) {
	rttest.RequireRoot(t, "cyclictest at SCHED_FIFO 99")
	ct, err := exec.LookPath("cyclictest")
	if err != nil {
		t.Skip("cyclictest not installed (.ci/run installs rt-tests)")
	}
	c, err := startCanary(ct, t.TempDir(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let it wake; not a timing assertion
	m, err := c.stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != runtime.NumCPU() {
		t.Fatalf("%d maxima %v, want one per CPU (%d)", len(m), m, runtime.NumCPU())
	}
	for i, d := range m {
		if d <= 0 {
			t.Errorf("CPU %d: max %v, want a measured wake-up", i, d)
		}
	}
}

// A canary that fails says so instead of reporting maxima.
func TestCanaryFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := startCanary("/bin/false", dir, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := c.stop(); err == nil || m != nil {
		t.Errorf("stop of a failed canary: %v, %v; want an error", m, err)
	}
	// a tool that ends well without writing its histogram
	c, err = startCanary("/bin/true", dir, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.stop(); err == nil || !strings.Contains(err.Error(), "no histogram") {
		t.Errorf("no histogram: %v", err)
	}
	if _, err := startCanary(dir+"/none", dir, time.Millisecond); err == nil {
		t.Error("a missing tool started")
	}
	_ = os.Remove(dir)
}
