package latency

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/rtapi/hist"
)

func sample(values ...int64) hist.Snapshot {
	h := hist.New(time.Microsecond, 100*time.Microsecond)
	for _, v := range values {
		h.Record(time.Duration(v))
	}
	return h.Snapshot()
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	var vals []int64
	for i := int64(1); i <= 1000; i++ {
		vals = append(vals, i*50) // 50 ns .. 50 µs
	}
	vals = append(vals, 500_000) // one overflow
	s := Summarize(sample(vals...))
	if s.Count != 1001 || s.Overflow != 1 || s.Min != 50 || s.Max != 500*time.Microsecond {
		t.Fatalf("summary %+v", s)
	}
	if s.P50 != 26*time.Microsecond || s.P90 != 46*time.Microsecond || s.P99 != 50*time.Microsecond {
		t.Fatalf("percentiles %+v", s)
	}
	if s.P999 != 51*time.Microsecond { // the 50 µs sample sits in bucket [50, 51)
		t.Fatalf("p99.9 %v", s.P999)
	}
	if z := Summarize(hist.Snapshot{}); z != (Summary{}) {
		t.Fatalf("empty summary %+v", z)
	}
}

func TestWritePercentiles(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	WritePercentilesOf(&buf, "wake-up latency", "samples", []Named{{Name: "servo", Summary: Summarize(sample(1_000, 2_000, 3_000))}})
	out := buf.String()
	for _, want := range []string{"wake-up latency (µs)", "p99.9", "servo", "3.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "missed") {
		t.Errorf("a missed column without missed releases:\n%s", out)
	}
}

// TestWritePercentilesSaysWhatIsLeftOut: the missed releases stand next
// to the percentiles that leave them out, and a percentile past the
// histogram's bound reads ≥bound, not the maximum it is capped at (with
// -h 400, p99.9 once equalled max).
func TestWritePercentilesSaysWhatIsLeftOut(t *testing.T) {
	t.Parallel()
	h := hist.New(time.Microsecond, 400*time.Microsecond)
	for range 990 {
		h.Record(20 * time.Microsecond)
	}
	for range 10 {
		h.Record(900 * time.Microsecond)
	}
	var buf bytes.Buffer
	WritePercentilesOf(&buf, "wake-up latency", "wake-ups", []Named{
		{Name: "base", Summary: Summarize(h.Snapshot()), Missed: 9000, Bound: 400 * time.Microsecond},
		{Name: "servo", Summary: Summarize(sample(1_000, 2_000, 3_000))},
	})
	lines := strings.Split(buf.String(), "\n")
	if !regexp.MustCompile(`^ *wake-up latency \(µs\) +wake-ups +missed +min +avg +p50 +p90 +p99 +p99\.9 +max *$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^ *base +1000 +9000 +20\.0 +[\d.]+ +21\.0 +21\.0 +21\.0 +≥400\.0 +900\.0 *$`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^ *servo +3 +0 +1\.0 `).MatchString(lines[2]) {
		t.Fatalf("want a missed column and p99.9 ≥400.0:\n%s", buf.String())
	}
}

func TestWriteTextHistogram(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	WriteTextHistogram(&buf, hist.Snapshot{}, 10)
	if !strings.Contains(buf.String(), "no samples") {
		t.Fatalf("empty histogram: %q", buf.String())
	}
	// narrow: one row per µs
	buf.Reset()
	WriteTextHistogram(&buf, sample(3_000, 3_500, 4_000, 6_000), 16)
	if got := strings.Count(buf.String(), "\n"); got != 4 {
		t.Fatalf("narrow histogram has %d rows, want 4 (3..6 µs):\n%s", got, buf.String())
	}
	// wide, with overflow: at most about rows lines plus the overflow row,
	// every sample counted once
	var vals []int64
	for i := int64(0); i < 5000; i++ {
		vals = append(vals, 1_000+i*i%97_000)
	}
	vals = append(vals, 200_000)
	buf.Reset()
	WriteTextHistogram(&buf, sample(vals...), 12)
	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) > 14 || !strings.Contains(lines[len(lines)-1], "≥100") {
		t.Fatalf("wide histogram:\n%s", out)
	}
	var total int
	for _, l := range lines {
		f := strings.Fields(l)
		var n int
		for _, c := range f[len(f)-1] {
			n = n*10 + int(c-'0')
		}
		total += n
	}
	if total != len(vals) {
		t.Fatalf("rows count %d samples, want %d:\n%s", total, len(vals), out)
	}
}

// Every sample past the bound: only the "≥" row. Before, the minimum's
// bucket index (339,369 of 10,000) indexed Counts and panicked, as the
// 386 guest's TestCancelPrintsSummary did when a 339 ms wake-up was its
// first and only sample.
func TestWriteTextHistogramAllPastTheBound(t *testing.T) {
	h := hist.New(time.Microsecond, 10*time.Millisecond)
	h.Record(339369 * time.Microsecond)
	h.Record(400 * time.Millisecond)
	var buf bytes.Buffer
	if err := WriteTextHistogram(&buf, h.Snapshot(), 10); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "≥10000") || !strings.HasSuffix(lines[0], " 2") {
		t.Fatalf("want one overflow row of 2:\n%s", buf.String())
	}
	// A maximum whose bucket index does not fit 32 bits.
	h = hist.New(time.Nanosecond, time.Microsecond)
	h.Record(500)
	h.Record(1 << 40)
	buf.Reset()
	if err := WriteTextHistogram(&buf, h.Snapshot(), 10); err != nil {
		t.Fatal(err)
	}
}
