package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/internal/rttest"
)

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-d", "0"}, {"-d", "soon"}, {"-i", "5"}, {"-rounds", "0"}, {"-p", "99"}, {"-alloc", "lots"},
		{"-only", "quiet,nonsense"}, {"-nosuch"}, {"stray"},
	} {
		var stderr bytes.Buffer
		if code := run(args, io.Discard, &stderr); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		if strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: want one line on stderr, got %q", args, stderr.String())
		}
	}
}

func TestParseSmoke(t *testing.T) {
	s, child, err := parse([]string{"-smoke", "-only", "quiet,switch"}, io.Discard)
	if err != nil || child != "" {
		t.Fatal(err)
	}
	if s.rounds != 1 || s.duration != time.Second || len(s.only) != 2 {
		t.Fatalf("smoke settings %+v", s)
	}
}

func TestMedianSummary(t *testing.T) {
	ss := []latency.Summary{
		{Count: 10, P50: 5, P99: 50, Max: 900},
		{Count: 10, P50: 7, P99: 30, Max: 100},
		{Count: 10, P50: 6, P99: 40, Max: 200},
	}
	m := medianSummary(ss)
	if m.Count != 30 || m.P50 != 6 || m.P99 != 40 || m.Max != 200 {
		t.Fatalf("median %+v", m)
	}
	if m := medianSummary(ss[:2]); m.P50 != 6 || m.Max != 500 {
		t.Fatalf("even median %+v", m)
	}
	if m := medianSummary(nil); m != (latency.Summary{}) {
		t.Fatalf("empty median %+v", m)
	}
}

func TestRenderMarkdownAndGoals(t *testing.T) {
	us := time.Microsecond
	res := results{
		Rounds: 3, Duration: 10 * time.Second, Interval: time.Millisecond, Priority: 90, CPU: 1, RTTests: "2.40",
		Groups: []groupResult{{
			ID: "quiet", Title: "Quiet", Metric: "latency", Load: "none",
			Rows: []rowResult{
				{Name: rowGortapi, Policy: "SCHED_FIFO", Wake: "nanosleep", Median: latency.Summary{Count: 3, P50: 10 * us, P99: 21 * us, P999: 40 * us, Max: 90 * us}},
				{Name: rowCyclic, Median: latency.Summary{Count: 3, P50: 10 * us, P99: 20 * us, P999: 30 * us, Max: 80 * us}},
				{Name: rowTicker, Median: latency.Summary{Count: 3, P50: 500 * us, P99: 900 * us, P999: 2000 * us, Max: 9000 * us}},
			},
			Ratios: []ratioResult{
				{Label: "gortapi / cyclictest", P50: 1, P99: 1.05, P999: 1.33, Max: 1.1},
				{Label: "time.Ticker / gortapi", P50: 50},
			},
		}, {ID: "switch", Title: "Switch", Metric: "switch", Skipped: "needs SCHED_FIFO"}},
	}
	res.Goals = goals(res)
	if len(res.Goals) != 3 || !res.Goals[0].Met || res.Goals[1].Met || !res.Goals[2].Met {
		t.Fatalf("goals %+v", res.Goals)
	}
	md := renderMarkdown(res)
	for _, want := range []string{"# gortapi benchmarks", "median of 3 rounds", "| quiet p99: gortapi ≤ 1.1 × cyclictest | 1.05× | yes |",
		"| quiet p99.9: gortapi ≤ 1.25 × cyclictest | 1.33× | no |", "| gortapi nanosleep | SCHED_FIFO | nanosleep | 3 |",
		"| gortapi / cyclictest | 1.00× | 1.05× | 1.33× | 1.10× |", "Skipped: needs SCHED_FIFO."} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func childResultOf(t *testing.T, spec childSpec) childResult {
	t.Helper()
	data, _ := json.Marshal(spec)
	var out bytes.Buffer
	if err := runChild(string(data), &out); err != nil {
		t.Fatal(err)
	}
	var r childResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("child output %q: %v", out.String(), err)
	}
	return r
}

func TestChildTicker(t *testing.T) {
	r := childResultOf(t, childSpec{Kind: "ticker", Interval: time.Millisecond, Duration: 300 * time.Millisecond, CPU: -1})
	if r.Cycles == 0 || r.Latency.Count != r.Cycles || r.Wake != "time.Ticker" {
		t.Fatalf("ticker result %+v", r)
	}
}

func TestChildGortapiPosix(t *testing.T) {
	r := childResultOf(t, childSpec{Kind: "gortapi", Flavor: "posix", Wake: "auto", Interval: time.Millisecond,
		Duration: 300 * time.Millisecond, CPU: -1, Busy: 20 * time.Microsecond, Loads: []string{"cpu=1"}})
	if r.Flavor != "posix" || r.Latency.Count == 0 || r.Exec.Count == 0 || r.Policy != "SCHED_OTHER" {
		t.Fatalf("gortapi child %+v", r)
	}
}

func TestChildSwitch(t *testing.T) {
	rttest.RequireRT(t)
	r := childResultOf(t, childSpec{Kind: "switch", Flavor: "rt-preempt", Priority: 50, Interval: time.Millisecond,
		Duration: 300 * time.Millisecond, CPU: 0})
	if r.Latency.Count == 0 || r.Policy != "SCHED_FIFO" {
		t.Fatalf("switch child %+v", r)
	}
}

func TestChildBadSpec(t *testing.T) {
	for _, spec := range []string{"{", `{"kind":"teleport"}`, `{"kind":"gortapi","loads":["disk=1"]}`} {
		if err := runChild(spec, io.Discard); err == nil {
			t.Errorf("runChild(%s) succeeded", spec)
		}
	}
}

// TestSmoke builds the program and runs two groups in -smoke mode; CI
// runs the whole -smoke pass as its own step.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the benchmark; skipped with -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "latency-bench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	jsonFile, doc := filepath.Join(dir, "r.json"), filepath.Join(dir, "B.md")
	cmd := exec.Command(bin, "-smoke", "-install=false", "-only", "vanilla,switch", "-json", jsonFile, "-doc", doc)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("smoke: %v\n%s", err, stderr.String())
	}
	md, err := os.ReadFile(doc)
	if err != nil || !bytes.Equal(md, out) {
		t.Fatalf("-doc file differs from stdout (%v)", err)
	}
	for _, want := range []string{"Smoke run", "Seed 000", "Task switching"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	var res results
	data, _ := os.ReadFile(jsonFile)
	if err := json.Unmarshal(data, &res); err != nil || len(res.Groups) != 2 || !res.Smoke {
		t.Fatalf("JSON results: %v %+v", err, res)
	}
	vanilla := res.Groups[0]
	if vanilla.ID != "vanilla" || len(vanilla.Rows) != 2 || vanilla.Rows[0].Median.Count == 0 {
		t.Fatalf("vanilla group %+v", vanilla)
	}
}
