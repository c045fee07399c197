package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
)

// osadlScript is OSADL's latency-plot script (www.osadl.org, "Create a
// latency plot from cyclictest histogram data", mklatencyplot.bash) from
// its step 2 on, as its users run it: cyclictest's output in ./output,
// the number of cores in $1 (the script sets it by hand). One line is
// added: the max per core, from the script's own pipeline without its
// sort, into ./maxima. It writes histogram, histogram1..N, maxima and
// plotcmd; gnuplot -persist <plotcmd draws plot.png. Like the original
// it runs without set -e (its expr exits 1 when the result is 0): the
// files it writes are what the test checks.
const osadlScript = `# 2. Get maximum latency
max=` + "`" + `grep "Max Latencies" output | tr " " "\n" | sort -n | tail -1 | sed s/^0*//` + "`" + `
grep "Max Latencies" output | tr " " "\n" | sed s/^0*// >maxima

# 3. Grep data lines, remove empty lines and create a common field separator
grep -v -e "^#" -e "^$" output | tr " " "\t" >histogram

# 4. Set the number of cores, for example
cores=$1

# 5. Create two-column data sets with latency classes and frequency values for each core, for example
for i in ` + "`seq 1 $cores`" + `
do
  column=` + "`expr $i + 1`" + `
  cut -f1,$column histogram >histogram$i
done

# 6. Create plot command header
echo -n -e "set title \"Latency plot\"\n\
set terminal png\n\
set xlabel \"Latency (us), max $max us\"\n\
set logscale y\n\
set xrange [0:400]\n\
set yrange [0.8:*]\n\
set ylabel \"Number of latency samples\"\n\
set output \"plot.png\"\n\
plot " >plotcmd

# 7. Append plot command data references
for i in ` + "`seq 1 $cores`" + `
do
  if test $i != 1
  then
    echo -n ", " >>plotcmd
  fi
  cpuno=` + "`expr $i - 1`" + `
  if test $cpuno -lt 10
  then
    title=" CPU$cpuno"
   else
    title="CPU$cpuno"
  fi
  echo -n "\"histogram$i\" using 1:2 title \"$title\" with histeps" >>plotcmd
done
`

// TestOSADLPlotPipeline runs OSADL's latency-plot script, its grep, tr,
// sed and cut as real processes, on the real cyclictest's output and on
// latency-test's for OSADL's command line (fewer loops): both must give
// one histogram row per bucket holding the bucket and one column per
// core, and a max per core that no filled bucket exceeds. Where gnuplot
// is installed, both plots must draw.
func TestOSADLPlotPipeline(t *testing.T) {
	rttest.RequireRT(t) // -p90: SCHED_FIFO
	cyclictest := rttest.RequireTool(t, "cyclictest", "apt-get install rt-tests")
	bash := rttest.RequireTool(t, "bash", "apt-get install bash")
	for _, tool := range []string{"grep", "tr", "sed", "cut", "sort", "tail", "seq", "expr"} {
		rttest.RequireTool(t, tool, "apt-get install coreutils grep sed")
	}
	cpus, err := availableCPUs()
	if err != nil {
		t.Fatal(err)
	}
	cores := len(cpus) // -S: a thread per CPU
	const buckets = 400
	// OSADL: cyclictest -l100000000 -m -Sp90 -i200 -h400 -q >output
	args := []string{"-l2000", "-m", "-Sp90", "-i200", "-h400", "-q"}
	theirs, err := exec.Command(cyclictest, args...).Output()
	if err != nil {
		t.Fatalf("cyclictest %q: %v", args, err)
	}
	var ours, stderr bytes.Buffer
	if code := run(context.Background(), args, &ours, &stderr); code != exitOK {
		t.Fatalf("latency-test %q: exit %d: %s", args, code, stderr.String())
	}
	var dirs []string
	for _, out := range []struct {
		name   string
		output []byte
	}{{"cyclictest", theirs}, {"latency-test", ours.Bytes()}} {
		dir := filepath.Join(t.TempDir(), out.name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "output"), out.output, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bash, "-c", osadlScript, "mklatencyplot", strconv.Itoa(cores))
		cmd.Dir = dir
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: OSADL's script: %v\n%s\noutput:\n%s", out.name, err, msg, out.output)
		}
		top := osadlHistogram(t, out.name, dir, cores, buckets)
		maxima := osadlMaxima(t, out.name, dir, cores)
		for core := range cores {
			if top[core] > maxima[core] {
				t.Errorf("%s: core %d has samples in bucket %d, above its max %d\noutput:\n%s", out.name, core, top[core], maxima[core], out.output)
			}
		}
		dirs = append(dirs, dir)
	}
	t.Run("gnuplot", func(t *testing.T) {
		gnuplot := rttest.RequireTool(t, "gnuplot", "apt-get install gnuplot-nox")
		for _, dir := range dirs {
			plotcmd, err := os.Open(filepath.Join(dir, "plotcmd"))
			if err != nil {
				t.Fatal(err)
			}
			defer plotcmd.Close()
			cmd := exec.Command(gnuplot, "-persist")
			cmd.Dir, cmd.Stdin = dir, plotcmd
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s: gnuplot -persist <plotcmd: %v\n%s", filepath.Base(dir), err, msg)
				continue
			}
			png, err := os.ReadFile(filepath.Join(dir, "plot.png"))
			if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("%s: plot.png is no PNG image (%v, %d bytes)", filepath.Base(dir), err, len(png))
			}
		}
	})
}

// osadlHistogram checks the script's histogram file: a row per bucket,
// tab-separated, the bucket's number then a count per core, and each
// core's file histogramN its two columns. It returns each core's highest
// bucket with samples (-1: none).
func osadlHistogram(t *testing.T, name, dir string, cores, buckets int) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "histogram"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(rows) != buckets {
		t.Fatalf("%s: %d histogram rows, want %d (one per bucket):\n%s", name, len(rows), buckets, b)
	}
	top := make([]int, cores)
	for i := range top {
		top[i] = -1
	}
	count := regexp.MustCompile(`^\d{6}$`)
	for i, row := range rows {
		fields := strings.Split(row, "\t")
		if len(fields) != 1+cores || fields[0] != fmt.Sprintf("%06d", i) {
			t.Fatalf("%s: histogram row %d is %q: want bucket %06d and %d counts, tab-separated", name, i, row, i, cores)
		}
		for core, f := range fields[1:] {
			if !count.MatchString(f) {
				t.Fatalf("%s: histogram row %d, core %d: count %q", name, i, core, f)
			}
			if n, _ := strconv.Atoi(f); n > 0 {
				top[core] = i
			}
		}
	}
	for core := range cores {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("histogram%d", core+1)))
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); len(lines) != buckets || strings.Count(lines[0], "\t") != 1 {
			t.Errorf("%s: histogram%d has %d lines, the first %q: want %d of bucket and count", name, core+1, len(lines), lines[0], buckets)
		}
	}
	return top
}

// osadlMaxima reads the script's maxima file: "#", "Max", "Latencies:",
// then a line per core, the max in µs without its leading zeros (empty
// for 0).
func osadlMaxima(t *testing.T, name, dir string, cores int) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "maxima"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3+cores || strings.Join(lines[:3], " ") != "# Max Latencies:" {
		t.Fatalf("%s: max per core: %q, want \"#\", \"Max\", \"Latencies:\" and %d values", name, lines, cores)
	}
	maxima := make([]int, cores)
	for core, l := range lines[3:] {
		if l == "" {
			continue // 00000 without its zeros
		}
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			t.Fatalf("%s: max of core %d is %q, not a number", name, core, l)
		}
		maxima[core] = n
	}
	return maxima
}
