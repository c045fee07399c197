package latency

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/latencyfile"
)

// Summary is the recording format's summary of a histogram; the tools'
// tables print it.
type Summary = latencyfile.Summary

// Summarize computes a Summary from a histogram snapshot.
func Summarize(h hist.Snapshot) Summary { return latencyfile.Summarize(h) }

// Micros formats a duration in microseconds with one decimal.
func Micros(d time.Duration) string {
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Microsecond))
}

// Named pairs a label with a summary, for tables.
type Named struct {
	Name    string
	Summary Summary
	// Missed releases (never woken for, so in no percentile); shown in a
	// column of their own when a row has some.
	Missed int64
	// Bound is the histogram's bound: a percentile past it is shown as
	// "≥bound", not as the maximum it is capped at. 0: unknown.
	Bound time.Duration
}

// MissedReleases is a task's count of releases it was never woken for:
// the overruns (with catch-up, cycles run late back to back; with skip,
// releases dropped), none of which is a wake-up in its latency histogram.
func MissedReleases(t TaskStats) int64 { return t.Overruns }

// WritePercentilesOf writes a table of summaries in microseconds, the
// count column headed by what was counted ("wake-ups", "body runs").
func WritePercentilesOf(w io.Writer, title, counted string, rows []Named) error {
	missed := false
	for _, r := range rows {
		missed = missed || r.Missed > 0
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s (µs)\t%s\t", title, counted)
	if missed {
		fmt.Fprint(tw, "missed\t")
	}
	fmt.Fprint(tw, "min\tavg\tp50\tp90\tp99\tp99.9\tmax\t\n")
	for _, r := range rows {
		s := r.Summary
		fmt.Fprintf(tw, "%s\t%d\t", r.Name, s.Count)
		if missed {
			fmt.Fprintf(tw, "%d\t", r.Missed)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", Micros(s.Min), Micros(s.Avg),
			r.percentile(0.5, s.P50), r.percentile(0.9, s.P90), r.percentile(0.99, s.P99), r.percentile(0.999, s.P999), Micros(s.Max))
	}
	return tw.Flush()
}

// percentile formats the p-th percentile v: "≥bound" when it lies among
// the samples past the histogram's bound, where only that is known.
func (r Named) percentile(p float64, v time.Duration) string {
	s := r.Summary
	rank := int64(math.Ceil(p * float64(s.Count)))
	if r.Bound > 0 && s.Overflow > 0 && rank > s.Count-int64(s.Overflow) {
		return "≥" + Micros(r.Bound)
	}
	return Micros(v)
}

// WriteTextHistogram draws a histogram in at most about rows lines from
// its minimum to its maximum: one row per bucket when the range is narrow,
// else rows whose widths grow geometrically, so both the bulk and the
// rare spikes get rows of their own. Bars are on a log scale; samples past
// the histogram bound get a last "≥" row.
func WriteTextHistogram(w io.Writer, h hist.Snapshot, rows int) error {
	if h.Count == 0 {
		_, err := fmt.Fprintln(w, "  (no samples)")
		return err
	}
	rows = max(rows, 2)
	// Bucket indexes of Min and Max, clamped in 64 bits before the
	// conversion (int is 32 bits on 386 and arm): every sample may lie
	// past the bound, where only the "≥" row counts them.
	n := int64(len(h.Counts))
	lo := int(min(max(0, int64(h.Min/h.Width)), n))
	hi := int(min(max(0, int64(h.Max/h.Width)+1), n))
	hi = max(hi, lo+1)
	edges := []int{lo}
	switch {
	case lo >= len(h.Counts):
		edges = nil
	case hi-lo <= rows:
		for b := lo + 1; b <= hi; b++ {
			edges = append(edges, b)
		}
	default:
		ratio := math.Pow(float64(hi+1)/float64(lo+1), 1/float64(rows))
		for e := float64(lo + 1); ; {
			e *= ratio
			b := min(int(math.Round(e))-1, hi)
			if b > edges[len(edges)-1] {
				edges = append(edges, b)
			}
			if b >= hi {
				break
			}
		}
	}
	type row struct {
		label string
		n     uint64
	}
	var out []row
	unit := float64(h.Width) / float64(time.Microsecond)
	for k := 0; k+1 < len(edges); k++ {
		var n uint64
		for i := edges[k]; i < edges[k+1]; i++ {
			n += h.Counts[i]
		}
		lab := fmt.Sprintf("%g", float64(edges[k])*unit)
		if edges[k+1]-edges[k] > 1 {
			lab = fmt.Sprintf("%g-%g", float64(edges[k])*unit, float64(edges[k+1])*unit)
		}
		out = append(out, row{lab, n})
	}
	if h.Overflow > 0 {
		out = append(out, row{fmt.Sprintf("≥%g", float64(len(h.Counts))*unit), h.Overflow})
	}
	var top uint64
	for _, r := range out {
		top = max(top, r.n)
	}
	const width = 40
	scale := math.Log10(float64(top) + 1)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, r := range out {
		bar := 0
		if r.n > 0 && scale > 0 {
			bar = max(1, int(math.Round(width*math.Log10(float64(r.n)+1)/scale)))
		}
		fmt.Fprintf(tw, "  %s µs\t|%s\t%d\n", r.label, strings.Repeat("#", bar), r.n)
	}
	return tw.Flush()
}
