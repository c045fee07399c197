package latencyfile

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/rtapi/hist"
)

// readCyclictest parses a file cyclictest itself wrote.
func readCyclictest(t *testing.T, name string) ([]hist.Snapshot, []byte) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := ReadHistfile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return hs, data
}

func TestParseRealCyclictestHistfile(t *testing.T) {
	t.Parallel()
	hs, _ := readCyclictest(t, "testdata/cyclictest-2.40-1thread.hist")
	if len(hs) != 1 {
		t.Fatalf("%d columns, want 1", len(hs))
	}
	h := hs[0]
	// footer: Total 94, Min 16, Avg 86, Max 2685, Overflows 1897
	if h.Count != 94+1897 || h.Overflow != 1897 || h.Min != 16_000 || h.Max != 2_685_000 || len(h.Counts) != 50 {
		t.Fatalf("parsed %+v", h)
	}
	if h.Mean() != 86*time.Microsecond {
		t.Fatalf("mean %v, want 86µs", h.Mean())
	}
}

// TestWriteHistfileReproducesCyclictest: parse what cyclictest printed,
// write it back, and get cyclictest's bytes, except for the per-cycle
// overflow list gortapi does not record.
func TestWriteHistfileReproducesCyclictest(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"testdata/cyclictest-2.40-1thread.hist", "testdata/cyclictest-2.40-2threads.out"} {
		hs, data := readCyclictest(t, name)
		var out bytes.Buffer
		if err := WriteHistfile(&out, hs, nil); err != nil {
			t.Fatal(err)
		}
		keep := func(b []byte) []string {
			var lines []string
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "# Thread") || strings.HasPrefix(l, "# /dev/cpu_dma_latency") {
					continue
				}
				lines = append(lines, l)
			}
			return lines
		}
		got, want := keep(out.Bytes()), keep(data)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: layout differs\ngot:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if !strings.Contains(out.String(), "# Thread 0: # 01897 others\n") && strings.Contains(name, "1thread") {
			t.Errorf("%s: overflow line missing:\n%s", name, out.String())
		}
	}
}

func TestHistfileRoundTrip(t *testing.T) {
	t.Parallel()
	a := hist.New(time.Microsecond, 20*time.Microsecond)
	b := hist.New(time.Microsecond, 20*time.Microsecond)
	for i := int64(0); i < 200; i++ {
		a.Record(time.Duration(2_000 + i*37%9_000))
		b.Record(time.Duration(1_000 + i*53%30_000)) // some overflow
	}
	in := []hist.Snapshot{a.Snapshot(), b.Snapshot()}
	var buf bytes.Buffer
	if err := WriteHistfile(&buf, in, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "# Histogram\n000000 000000\t000000\n") {
		t.Fatalf("layout starts %q", buf.String()[:40])
	}
	out, err := ReadHistfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if !reflect.DeepEqual(out[i].Counts, in[i].Counts) || out[i].Count != in[i].Count || out[i].Overflow != in[i].Overflow {
			t.Errorf("column %d: got %+v, want %+v", i, out[i], in[i])
		}
		if out[i].Max/1000 != in[i].Max/1000 || out[i].Min/1000 != in[i].Min/1000 {
			t.Errorf("column %d: min/max %d/%d, want %d/%d µs", i, out[i].Min, out[i].Max, in[i].Min, in[i].Max)
		}
	}
}

func TestWriteHistfileRefusesOtherWidths(t *testing.T) {
	t.Parallel()
	h := hist.New(100*time.Nanosecond, time.Microsecond)
	if err := WriteHistfile(&bytes.Buffer{}, []hist.Snapshot{h.Snapshot()}, nil); err == nil {
		t.Fatal("accepted 100 ns buckets")
	}
}

// An overflow count past int's range lists what it can and counts the
// rest: it was converted to int for the list's length, which went
// negative (from 1<<31 on 32-bit builds, 1<<63 on 64-bit ones) and
// panicked.
func TestWriteHistfileHugeOverflowCount(t *testing.T) {
	t.Parallel()
	for _, n := range []uint64{1<<31 + 5, 1<<32 + 1, 1<<63 + 5} {
		h := hist.Snapshot{Width: time.Microsecond, Counts: make([]uint64, 4), Count: 1 << 62, Overflow: n}
		var out bytes.Buffer
		if err := WriteHistfile(&out, []hist.Snapshot{h}, [][]int64{{10, 20, 30, 40, 50}}); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("# Thread 0: 00010 00020 00030 00040 # %05d others\n", n-4)
		if !strings.Contains(out.String(), want) {
			t.Errorf("overflow %d: no line %q in\n%s", n, want, out.String())
		}
	}
}

func TestReadHistfileErrors(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		"",
		"# Histogram\n",
		"# Histogram\n000000 x\n",
		"# Histogram\n000000 000001\t000002\n000001 000001\n",
		"# Histogram\n000000 000001\n# Max Latencies: abc\n",
		"# Histogram\n18446744073709551615 000001\n", // a negative int on 64-bit
		"# Histogram\n4294967296 000001\n",           // bucket 0 where int has 32 bits
		// Counts that add up past int64 (Count wrapped negative).
		"# Histogram\n000000 18446744073709551615\n",
		"# Histogram\n000000 9223372036854775807\n000001 000001\n",
		"# Histogram\n000000 9223372036854775807\n# Histogram Overflows: 00001\n",
		// An average times the count past int64 nanoseconds (Sum wrapped).
		"# Histogram\n000000 4611686018427387904\n# Avg Latencies: 00002\n",
	} {
		if _, err := ReadHistfile(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadHistfile(%q) succeeded", bad)
		}
	}
}

// readCost is the most ReadHistfile may allocate for an input of n bytes:
// proportional to the input.
func readCost(n int) uint64 { return 1<<20 + 64*uint64(n) }

// allocated is what f allocates, from the runtime's own count.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A 220-byte histfile with 100 columns whose only row is bucket 2^20-1 made
// ReadHistfile allocate 1.25 GB (1000 columns: OOM-killed): every column
// was grown to the row's bucket. Rows that skip buckets may not ask for
// more counts than the file has bytes.
func TestReadHistfileMemoryBomb(t *testing.T) {
	// Not parallel: it reads the process's allocation count.
	for _, columns := range []int{100, 1000} {
		bomb := "# Histogram\n1048575" + strings.Repeat(" 1", columns) + "\n"
		var err error
		got := allocated(func() { _, err = ReadHistfile(strings.NewReader(bomb)) })
		if err == nil || !strings.Contains(err.Error(), "skip buckets") {
			t.Errorf("%d columns: err = %v", columns, err)
		}
		if got > readCost(len(bomb)) {
			t.Errorf("%d columns, %d bytes: allocated %d bytes, more than %d", columns, len(bomb), got, readCost(len(bomb)))
		}
	}
	// A dense file, as cyclictest writes one, is read whatever its size.
	var b strings.Builder
	b.WriteString("# Histogram\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "%06d 000001\t000002\n", i)
	}
	hs, err := ReadHistfile(strings.NewReader(b.String()))
	if err != nil || len(hs) != 2 || len(hs[1].Counts) != 5000 || hs[1].Count != 10000 {
		t.Fatalf("dense file: %v", err)
	}
}

// FuzzReadHistfile: any input is a histogram or an error, and costs at
// most readCost of its length in allocation.
func FuzzReadHistfile(f *testing.F) {
	f.Add("# Histogram\n000000 000001\n000001 000002\n# Max Latencies: 00001\n# Histogram Overflows: 00000\n")
	f.Add("T: 0 ( 1) P:80\n# Histogram\n000003 000001\t000004\n# Thread 0: 00001 # 00002 others\n")
	f.Add("# Histogram\n1048575" + strings.Repeat(" 1", 100) + "\n")
	f.Fuzz(func(t *testing.T, s string) {
		var hs []hist.Snapshot
		var err error
		if got := allocated(func() { hs, err = ReadHistfile(strings.NewReader(s)) }); got > readCost(len(s)) {
			t.Fatalf("%d bytes of input: allocated %d bytes", len(s), got)
		}
		if err != nil {
			return
		}
		for _, h := range hs {
			if h.Width != time.Microsecond || len(h.Counts) > hist.MaxBuckets+1 {
				t.Fatalf("bad snapshot %+v", h)
			}
		}
	})
}

// overflowLists reads cyclictest's "# Thread N: 00809 ..." lines.
func overflowLists(data []byte) [][]int64 {
	var at [][]int64
	for _, l := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(l, "# Thread ")
		if !ok {
			continue
		}
		_, rest, _ = strings.Cut(rest, ":")
		rest, _, _ = strings.Cut(rest, "#")
		var cycles []int64
		for _, f := range strings.Fields(rest) {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				panic(err)
			}
			cycles = append(cycles, n)
		}
		at = append(at, cycles)
	}
	return at
}

// TestWriteHistfileWithOverflowCyclesReproducesCyclictest: with the cycle numbers of the
// overflows, the output is cyclictest's, byte for byte, overflow list
// included (cyclictest's own header line aside).
func TestWriteHistfileWithOverflowCyclesReproducesCyclictest(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"testdata/cyclictest-2.40-2threads-h400.out", "testdata/cyclictest-2.40-2threads.out"} {
		hs, data := readCyclictest(t, name)
		var out bytes.Buffer
		if err := WriteHistfile(&out, hs, overflowLists(data)); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimPrefix(string(data), "# /dev/cpu_dma_latency set to 0us\n")
		if out.String() != want {
			t.Errorf("%s: differs\ngot:\n%s\nwant:\n%s", name, tail(out.String()), tail(want))
		}
	}
}

func tail(s string) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}
