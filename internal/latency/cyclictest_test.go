package latency

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/hist"
)

func TestFormatThreadLineMatchesCyclictest(t *testing.T) {
	// lines printed by cyclictest 2.40 on the development VM
	for _, c := range []struct {
		l    ThreadLine
		want string
	}{
		{ThreadLine{0, 30829, 80, 1000, 1000, 26, 61, 72, 724},
			"T: 0 (30829) P:80 I:1000 C:   1000 Min:     26 Act:   61 Avg:   72 Max:     724"},
		{ThreadLine{1, 30850, 80, 1500, 618, 21, 72, 90, 2882},
			"T: 1 (30850) P:80 I:1500 C:    618 Min:     21 Act:   72 Avg:   90 Max:    2882"},
		{ThreadLine{12, 7, 5, 100, 12345678, 1, 2, 3, 123456789},
			"T:12 (    7) P: 5 I:100 C:12345678 Min:      1 Act:    2 Avg:    3 Max:123456789"},
	} {
		if got := FormatThreadLine(c.l); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

func TestLineOf(t *testing.T) {
	h := hist.New(time.Microsecond, time.Millisecond)
	for _, ns := range []int64{3_400, 5_900, 41_200} {
		h.Record(ns)
	}
	ts := TaskStats{Tid: 42, Act: 5_900}
	ts.Latency, ts.Priority, ts.Period = h.Snapshot(), 98, time.Millisecond
	got := FormatThreadLine(LineOf(0, ts))
	want := "T: 0 (   42) P:98 I:1000 C:      3 Min:      3 Act:    5 Avg:   16 Max:      41"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// readCyclictest parses a file cyclictest itself wrote.
func readCyclictest(t *testing.T, name string) ([]hist.Snapshot, []byte) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := ParseHistogram(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return hs, data
}

func TestParseRealCyclictestHistfile(t *testing.T) {
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

// TestWriteHistogramReproducesCyclictest: parse what cyclictest printed,
// write it back, and get cyclictest's bytes, except for the per-cycle
// overflow list gortapi does not record.
func TestWriteHistogramReproducesCyclictest(t *testing.T) {
	for _, name := range []string{"testdata/cyclictest-2.40-1thread.hist", "testdata/cyclictest-2.40-2threads.out"} {
		hs, data := readCyclictest(t, name)
		var out bytes.Buffer
		if err := WriteHistogram(&out, hs); err != nil {
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

func TestHistogramRoundTrip(t *testing.T) {
	a := hist.New(time.Microsecond, 20*time.Microsecond)
	b := hist.New(time.Microsecond, 20*time.Microsecond)
	for i := int64(0); i < 200; i++ {
		a.Record(2_000 + i*37%9_000)
		b.Record(1_000 + i*53%30_000) // some overflow
	}
	in := []hist.Snapshot{a.Snapshot(), b.Snapshot()}
	var buf bytes.Buffer
	if err := WriteHistogram(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "# Histogram\n000000 000000\t000000\n") {
		t.Fatalf("layout starts %q", buf.String()[:40])
	}
	out, err := ParseHistogram(&buf)
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

func TestWriteHistogramRefusesOtherWidths(t *testing.T) {
	h := hist.New(100*time.Nanosecond, time.Microsecond)
	if err := WriteHistogram(&bytes.Buffer{}, []hist.Snapshot{h.Snapshot()}); err == nil {
		t.Fatal("accepted 100 ns buckets")
	}
}

func TestParseHistogramErrors(t *testing.T) {
	for _, bad := range []string{
		"",
		"# Histogram\n",
		"# Histogram\n000000 x\n",
		"# Histogram\n000000 000001\t000002\n000001 000001\n",
		"# Histogram\n000000 000001\n# Max Latencies: abc\n",
		"# Histogram\n18446744073709551615 000001\n", // a negative int on 64-bit
		"# Histogram\n4294967296 000001\n",           // bucket 0 where int has 32 bits
	} {
		if _, err := ParseHistogram(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseHistogram(%q) succeeded", bad)
		}
	}
}

func FuzzParseHistogram(f *testing.F) {
	f.Add("# Histogram\n000000 000001\n000001 000002\n# Max Latencies: 00001\n# Histogram Overflows: 00000\n")
	f.Add("T: 0 ( 1) P:80\n# Histogram\n000003 000001\t000004\n# Thread 0: 00001 # 00002 others\n")
	f.Fuzz(func(t *testing.T, s string) {
		hs, err := ParseHistogram(strings.NewReader(s))
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
