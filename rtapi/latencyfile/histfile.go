package latencyfile

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gortapi/gortapi/rtapi/hist"
)

// WriteHistfile writes histograms, each of 1 µs buckets, in cyclictest's
// -h / --histfile layout (rt-tests 2.x), one column each.
// overflowCycles[i] lists the cycles at which hs[i] overflowed; as
// cyclictest, it prints at most one per bucket and counts the rest, and
// any unlisted, as "others".
func WriteHistfile(w io.Writer, hs []hist.Snapshot, overflowCycles [][]int64) error {
	at := overflowCycles
	rows := 0
	for _, h := range hs {
		if h.Width != time.Microsecond {
			return fmt.Errorf("cyclictest histograms have 1 µs buckets, not %v", h.Width)
		}
		rows = max(rows, len(h.Counts))
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("# Histogram\n")
	for i := range rows {
		fmt.Fprintf(bw, "%06d ", i)
		for j, h := range hs {
			if j > 0 {
				bw.WriteByte('\t')
			}
			var c uint64
			if i < len(h.Counts) {
				c = h.Counts[i]
			}
			fmt.Fprintf(bw, "%06d", c)
		}
		bw.WriteByte('\n')
	}
	footer := func(label, format string, f func(h hist.Snapshot) uint64) {
		bw.WriteString(label)
		for _, h := range hs {
			fmt.Fprintf(bw, format, f(h))
		}
		bw.WriteByte('\n')
	}
	footer("# Total:", " %09d", func(h hist.Snapshot) uint64 { return uint64(h.Count) - h.Overflow })
	footer("# Min Latencies:", " %05d", func(h hist.Snapshot) uint64 { return uint64(micros(int64(h.Min))) })
	footer("# Avg Latencies:", " %05d", func(h hist.Snapshot) uint64 {
		if h.Count == 0 {
			return 0
		}
		return uint64(micros(int64(h.Sum) / h.Count))
	})
	footer("# Max Latencies:", " %05d", func(h hist.Snapshot) uint64 { return uint64(micros(int64(h.Max))) })
	footer("# Histogram Overflows:", " %05d", func(h hist.Snapshot) uint64 { return h.Overflow })
	bw.WriteString("# Histogram Overflow at cycle number:\n")
	for i, h := range hs {
		fmt.Fprintf(bw, "# Thread %d:", i)
		var listed []int64
		if i < len(at) {
			listed = at[i]
		}
		n := min(len(listed), len(h.Counts))
		if h.Overflow < uint64(n) { // compared unsigned: int(h.Overflow) may be negative
			n = int(h.Overflow)
		}
		listed = listed[:n]
		for _, c := range listed {
			fmt.Fprintf(bw, " %05d", c)
		}
		if others := h.Overflow - uint64(len(listed)); others > 0 {
			fmt.Fprintf(bw, " # %05d others", others)
		}
		bw.WriteByte('\n')
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// ReadHistfile reads cyclictest's histogram layout (cyclictest's file or
// stdout, or WriteHistfile's) into one histogram per column, an -H summary
// column included; lines before "# Histogram" are skipped. Count includes
// overflows; Sum (from the average), Min and Max have 1 µs resolution. A
// bucket past hist.MaxBuckets, an uneven row, an implausible footer, rows
// skipping more buckets than the file has bytes, or counts (or the sum the
// average implies) past int64 is an error.
func ReadHistfile(r io.Reader) ([]hist.Snapshot, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	type row struct {
		bucket int
		counts []uint64
	}
	var rows []row
	var mins, avgs, maxs, ovfs []uint64
	footers := map[string]*[]uint64{"Min Latencies": &mins, "Avg Latencies": &avgs, "Max Latencies": &maxs, "Histogram Overflows": &ovfs}
	seenHeader := false
	line, columns, maxBucket := 0, 0, 0
	inputBytes := 0
	for sc.Scan() {
		line++
		inputBytes += len(sc.Bytes()) + 1
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "#") {
			label, rest, _ := strings.Cut(strings.TrimSpace(text[1:]), ":")
			seenHeader = seenHeader || label == "Histogram"
			if dst := footers[label]; dst != nil {
				vals, err := parseFields(rest)
				if err != nil {
					return nil, fmt.Errorf("histogram line %d: %w", line, err)
				}
				*dst = vals
			}
			continue
		}
		if !seenHeader {
			continue // cyclictest's status lines before the histogram
		}
		vals, err := parseFields(text)
		if err != nil || len(vals) < 2 {
			return nil, fmt.Errorf("histogram line %d: want a bucket and counts, got %q", line, text)
		}
		if vals[0] > hist.MaxBuckets { // before converting: int may have 32 bits
			return nil, fmt.Errorf("histogram line %d: bucket %d too large", line, vals[0])
		}
		if rows == nil {
			columns = len(vals) - 1
		}
		if len(vals)-1 != columns {
			return nil, fmt.Errorf("histogram line %d: %d columns, earlier rows had %d", line, len(vals)-1, columns)
		}
		rows = append(rows, row{int(vals[0]), vals[1:]})
		maxBucket = max(maxBucket, int(vals[0]))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if rows == nil {
		return nil, fmt.Errorf("no histogram rows found")
	}
	// A real file writes every bucket, at least two bytes each: one that
	// skips buckets to ask for more counts than it has bytes is refused.
	if cells := uint64(columns) * uint64(maxBucket+1); cells > uint64(inputBytes)+histSlack {
		return nil, fmt.Errorf("histogram rows skip buckets: %d columns up to bucket %d would take %d counts from a %d-byte file",
			columns, maxBucket, cells, inputBytes)
	}
	hs := make([]hist.Snapshot, columns)
	for i := range hs {
		hs[i].Width = time.Microsecond
		hs[i].Counts = make([]uint64, maxBucket+1)
	}
	for _, r := range rows {
		for i := range hs {
			if r.counts[i] > math.MaxInt64-uint64(hs[i].Count) {
				return nil, fmt.Errorf("histogram column %d: counts add up past %d", i, int64(math.MaxInt64))
			}
			hs[i].Counts[r.bucket] = r.counts[i]
			hs[i].Count += int64(r.counts[i])
		}
	}
	at := func(v []uint64, i int) int64 {
		if i < len(v) {
			return int64(v[i])
		}
		return 0
	}
	for _, v := range [][]uint64{mins, avgs, maxs, ovfs} {
		for _, x := range v {
			if x > implausible {
				return nil, fmt.Errorf("implausible footer value %d: a negative latency printed unsigned", x)
			}
		}
	}
	for i := range hs {
		h := &hs[i]
		h.Overflow = uint64(at(ovfs, i))
		if h.Overflow > math.MaxInt64-uint64(h.Count) {
			return nil, fmt.Errorf("histogram column %d: counts and %d overflows add up past %d", i, h.Overflow, int64(math.MaxInt64))
		}
		h.Count += int64(h.Overflow)
		if avg := at(avgs, i); avg > 0 && h.Count > math.MaxInt64/(avg*int64(time.Microsecond)) {
			return nil, fmt.Errorf("histogram column %d: average %d µs over %d samples adds up past int64 nanoseconds", i, avg, h.Count)
		}
		h.Min, h.Max = time.Duration(at(mins, i))*time.Microsecond, time.Duration(at(maxs, i))*time.Microsecond
		h.Sum = time.Duration(at(avgs, i)*h.Count) * time.Microsecond
		if h.Count == 0 {
			h.Min, h.Max = 0, 0
		}
	}
	return hs, nil
}

// implausible bounds footer values: cyclictest prints a negative latency
// as a huge unsigned number.
const implausible = uint64(1) << 48

// histSlack is the counts a histfile may ask for beyond its length in bytes.
const histSlack = 1 << 16

func parseFields(s string) ([]uint64, error) {
	f := strings.Fields(s)
	out := make([]uint64, 0, len(f))
	for _, x := range f {
		if x == "#" {
			break // "# 00012 others"
		}
		v, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not a number: %q", x)
		}
		out = append(out, v)
	}
	return out, nil
}

// micros converts ns to whole µs, clamping below 0 as cyclictest's
// unsigned fields would never show a negative.
func micros(ns int64) int64 { return max(0, ns/1000) }
