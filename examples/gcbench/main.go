package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gortapi/gortapi/examples/internal/outfile"
)

// row is one configuration of the matrix.
type row struct {
	Name string
	// Cyclic runs cyclictest instead of a gortapi task; with Load the
	// allocation load runs in another process.
	Cyclic bool `json:",omitempty"`
	// Load runs the allocation goroutines; LoadOnly runs nothing else
	// (the load process of a cyclictest row).
	Load     bool `json:",omitempty"`
	LoadOnly bool `json:",omitempty"`
	// Mitigations.
	Raw       bool   `json:",omitempty"` // Options.RuntimeGuard On: a raw sleep, and the guard's other steps
	Procs     int    `json:",omitempty"` // GOMAXPROCS += Procs
	GCPercent int    `json:",omitempty"` // debug.SetGCPercent, 0: leave
	MemLimit  bool   `json:",omitempty"` // GOGC off, soft limit at 8x the live heap
	GODEBUG   string `json:",omitempty"`
	PinRest   bool   `json:",omitempty"` // every other thread off the task's CPU
	// Shield is RTAPI_RUNTIME_GUARD for the row: "off" measures without
	// the runtime guard the real-time flavors apply by default.
	Shield string `json:",omitempty"`
}

// settings are the shared knobs, passed to every child.
type settings struct {
	Duration time.Duration
	Period   time.Duration
	Alloc    float64 // bytes per second
	Live     int64   // bytes kept reachable by the load
	Workers  int
	CPU      int
	Trace    string `json:",omitempty"`
}

func matrix() []row {
	const off = "off"
	return []row{
		{Name: "cyclictest quiet", Cyclic: true},
		{Name: "cyclictest +load elsewhere", Cyclic: true, Load: true},
		{Name: "gortapi quiet", Shield: off},
		{Name: "gortapi +alloc", Load: true, Shield: off},
		{Name: "+raw-sleep", Load: true, Shield: off, Raw: true},
		{Name: "+gomaxprocs", Load: true, Shield: off, Procs: 1},
		{Name: "+raw-sleep+gomaxprocs", Load: true, Shield: off, Raw: true, Procs: 1},
		{Name: "+gogc400", Load: true, Shield: off, GCPercent: 400},
		{Name: "+memlimit", Load: true, Shield: off, MemLimit: true},
		{Name: "+asyncpreemptoff", Load: true, Shield: off, GODEBUG: "asyncpreemptoff=1"},
		{Name: "+gcshrinkstackoff", Load: true, Shield: off, GODEBUG: "gcshrinkstackoff=1"},
		{Name: "+pin-rest", Load: true, Shield: off, PinRest: true},
		{Name: "defaults quiet"},
		{Name: "defaults +alloc", Load: true},
		{Name: "defaults +pin-rest", Load: true, PinRest: true},
	}
}

func main() {
	var (
		s         settings
		alloc     = flag.String("alloc", "200MB/s", "allocation rate of the load goroutines")
		live      = flag.String("live", "64MB", "heap the load keeps reachable")
		only      = flag.String("only", "", "run only the rows whose name matches this regular expression")
		jsonOut   = flag.String("json", "", "write every row's results to this file")
		child     = flag.String("child", "", "internal: run one row, given as JSON")
		settingsJ = flag.String("settings", "", "internal: the shared settings, as JSON")
	)
	flag.DurationVar(&s.Duration, "d", 10*time.Second, "duration of each row")
	flag.DurationVar(&s.Period, "period", time.Millisecond, "task period")
	flag.IntVar(&s.Workers, "workers", 2, "allocating goroutines")
	flag.IntVar(&s.CPU, "cpu", -1, "CPU of the real-time thread (-1: the last one)")
	flag.StringVar(&s.Trace, "trace", "", "write an execution trace of the (single) row to this file")
	flag.Parse()

	if *child != "" {
		os.Exit(runChild(*child, *settingsJ))
	}
	var err error
	if s.Alloc, err = parseRate(*alloc); err != nil {
		fail(err)
	}
	if s.Live, err = parseBytes(*live); err != nil {
		fail(err)
	}
	if s.CPU < -1 {
		fail(fmt.Errorf("-cpu %d: want a CPU number, or -1 for the last one", s.CPU))
	}
	if s.CPU == -1 {
		s.CPU = lastCPU()
	}
	rows := matrix()
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fail(err)
		}
		rows = filter(rows, re)
	}
	if s.Trace != "" && len(rows) != 1 {
		fail(errors.New("-trace needs -only to select exactly one row"))
	}
	fmt.Printf("gcbench: %v a row, period %v, load %s into a %s live heap (%d goroutines), RT thread on CPU %d\n\n",
		s.Duration, s.Period, *alloc, *live, s.Workers, s.CPU)
	var results []result
	for _, r := range rows {
		res, err := runRow(r, s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gcbench: %s: %v\n", r.Name, err)
			continue
		}
		results = append(results, res)
		if res.Faulted != "" {
			fmt.Fprintf(os.Stderr, "  %s: %s\n", r.Name, res.Faulted)
		}
		fmt.Fprintf(os.Stderr, "  %-28s p99 %6.0f µs  p99.9 %6.0f µs  max %6.0f µs\n", r.Name,
			us(res.P99), us(res.P999), us(res.Max))
	}
	fmt.Println()
	printTable(os.Stdout, results)
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, results); err != nil {
			fail(err)
		}
	}
}

// writeJSON writes -json's file: every row's results. A symlink at name
// is replaced, not followed (examples/internal/outfile).
func writeJSON(name string, results []result) error {
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteFile(name, b, 0o644)
}

func filter(rows []row, re *regexp.Regexp) []row {
	var out []row
	for _, r := range rows {
		if re.MatchString(r.Name) {
			out = append(out, r)
		}
	}
	return out
}

// runRow runs one row in a fresh process (cyclictest rows: cyclictest,
// and the load in a child when asked).
func runRow(r row, s settings) (result, error) {
	if r.Cyclic {
		if r.Load {
			load, err := startChild(row{Name: "load", Load: true, LoadOnly: true}, s)
			if err != nil {
				return result{}, err
			}
			defer func() {
				_ = load.Process.Kill()
				_ = load.Wait()
			}()
			time.Sleep(time.Second) // let the heap reach its live size
		}
		res, err := runCyclictest(s)
		res.Row = r
		return res, err
	}
	cmd, out := childCmd(r, s)
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("child: %w", err)
	}
	var res result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return result{}, fmt.Errorf("child output: %w", err)
	}
	res.Row = r
	return res, nil
}

func childCmd(r row, s settings) (*exec.Cmd, *bytes.Buffer) {
	rj, _ := json.Marshal(r)
	sj, _ := json.Marshal(s)
	cmd := exec.Command(os.Args[0], "-child", string(rj), "-settings", string(sj))
	env := os.Environ()
	if r.GODEBUG != "" {
		env = append(env, "GODEBUG="+r.GODEBUG)
	}
	if r.Shield != "" {
		env = append(env, "RTAPI_RUNTIME_GUARD="+r.Shield)
	}
	cmd.Env = env
	out := new(bytes.Buffer)
	cmd.Stdout = out
	cmd.Stderr = os.Stderr
	return cmd, out
}

func startChild(r row, s settings) (*exec.Cmd, error) {
	cmd, _ := childCmd(r, s)
	cmd.Stdout = io.Discard
	return cmd, cmd.Start()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gcbench:", err)
	os.Exit(2)
}

// parseRate parses "200MB/s" (or "200MB") into bytes per second.
func parseRate(s string) (float64, error) {
	n, err := parseBytes(strings.TrimSuffix(s, "/s"))
	return float64(n), err
}

func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}}
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("bad size %q (want e.g. 64MB)", s)
			}
			return int64(n * float64(u.mult)), nil
		}
	}
	return 0, fmt.Errorf("bad size %q (want e.g. 64MB)", s)
}
