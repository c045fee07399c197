package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gortapi/gortapi/rtapi/hist"
)

// runCyclictest runs cyclictest with the row's period, priority 98 and CPU,
// memory locked, and reads its 1 µs histogram.
func runCyclictest(s settings) (result, error) {
	const boundUS = 100000
	args := []string{"-q", "-m", "-p", "98", "-t", "1",
		"-i", strconv.Itoa(int(s.Period / time.Microsecond)),
		"-a", strconv.Itoa(s.CPU),
		"-D", strconv.Itoa(int(s.Duration / time.Second)),
		"-h", strconv.Itoa(boundUS)}
	out, err := exec.Command("cyclictest", args...).Output()
	if err != nil {
		return result{}, fmt.Errorf("cyclictest %s: %w", strings.Join(args, " "), err)
	}
	return parseCyclictest(out)
}

// parseCyclictest reads "NNNNNN CCCCCC" histogram lines and the
// "# Max Latencies" and "# Histogram Overflows" summaries.
func parseCyclictest(out []byte) (result, error) {
	var counts []uint64
	var res result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "# Max Latencies:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			res.Max = time.Duration(n) * time.Microsecond
			continue
		}
		if v, ok := strings.CutPrefix(line, "# Histogram Overflows:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			res.Overflow = n
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(line, "#") {
			continue
		}
		b, err1 := strconv.Atoi(f[0])
		c, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil || b < 0 || b >= hist.MaxBuckets {
			continue
		}
		for len(counts) <= b {
			counts = append(counts, 0)
		}
		counts[b] = c
	}
	total := res.Overflow
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return res, fmt.Errorf("cyclictest printed no histogram")
	}
	res.Samples = int64(total)
	pct := func(p float64) time.Duration {
		want := uint64(float64(total)*p/100 + 0.5)
		var n uint64
		for i, c := range counts {
			n += c
			if n >= want {
				return time.Duration(i+1) * time.Microsecond
			}
		}
		return res.Max
	}
	res.P50, res.P99, res.P999 = pct(50), pct(99), pct(99.9)
	return res, nil
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// printTable prints the rows as a Markdown table, ratios against the
// "cyclictest quiet" row when there is one.
func printTable(w io.Writer, results []result) {
	var ref *result
	for i := range results {
		if results[i].Row.Name == "cyclictest quiet" {
			ref = &results[i]
		}
	}
	fmt.Fprintln(w, "| row | samples | p50 µs | p99 µs | p99.9 µs | max µs | p99 / ct | p99.9 / ct | preempted | blocked | in GC | late: blocked/preempted/GC/other | GCs | STW max µs | sched p99 µs | alloc MB/s | GC CPU % |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
	for _, r := range results {
		r99, r999 := "–", "–"
		if ref != nil {
			r99, r999 = ratio(r.P99, ref.P99), ratio(r.P999, ref.P999)
		}
		in := r.Interference
		task := "| – | – | – | – | – | – | – | – | – |"
		if !r.Row.Cyclic {
			task = fmt.Sprintf("| %d | %d | %d | %d/%d/%d/%d | %d | %.0f | %.0f | %.0f | %.0f |",
				in.PreemptedCycles, in.BlockedCycles, in.GCCycles,
				in.LateBlocked, in.LatePreempted, in.LateGC, in.LateUnexplained,
				r.GCCycles, us(r.STWMax), us(r.SchedP99), r.AllocMBps, r.GCCPUPercent)
		}
		name := r.Row.Name
		if r.Faulted != "" {
			name += " (watchdog fault)"
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.0f | %.0f | %s | %s %s\n",
			name, r.Samples, us(r.P50), us(r.P99), us(r.P999), us(r.Max), r99, r999, task)
	}
}

// lastCPU is the highest CPU this process may run on.
func lastCPU() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexAny(s, ",-"); i >= 0 {
		s = s[i+1:]
	}
	n, _ := strconv.Atoi(s)
	return n
}
