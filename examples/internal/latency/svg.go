package latency

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/gortapi/gortapi/examples/internal/svg"
	"github.com/gortapi/gortapi/rtapi/hist"
)

// Series is one histogram to plot.
type Series struct {
	Name string
	Hist hist.Snapshot
}

const (
	svgW                = 900
	svgLeft, svgRight   = 70, 20
	svgPlotH            = 300
	svgOverflowW        = 46 // the overflow column right of the x axis
	svgMarkerFont       = 10
	svgMarkerRow        = 13 // height of a row of percentile labels
	svgLegendRow        = 18
	svgFont             = 12
	svgTitleFont        = 15
	svgColumns          = 600 // at most this many x steps
	svgMinLabelGap      = 4   // px between two labels on one row
	svgCanvasMargin     = 4   // px between a label and the canvas edge
	svgOverflowGap      = 10
	svgAxisLabelOffset  = 16
	svgAxisTitleOffset  = 36
	svgLegendTopOffset  = 60
	svgMarkerBandTop    = 36
	svgPlotTopClearance = 16
)

// textWidth bounds the rendered width of s at size px.
func textWidth(s string, size float64) float64 { return svg.Sans.Width(s, size) }

// WriteSVG plots the histograms as latency-histogram --logscale does, made
// to read at a glance: the x axis is latency on a log scale (log10(1+µs):
// the body of a distribution and its tail both get room), the y axis the
// count per bucket, also log. Each series has its own colour, dashed
// markers at p50, p99 and p99.9 whose labels sit in a band of rows above
// the plot and never overlap, and a bar in the "≥ bound" column right of
// the axis for the samples past the histogram bound. The legend sits under
// the plot, one line per series; the canvas grows to hold it. The output
// is a standalone SVG 1.1 document, one element per line.
func WriteSVG(w io.Writer, title string, series []Series) error {
	top := 1 // largest bucket index with a sample, +1
	width := time.Microsecond
	if len(series) > 0 && series[0].Hist.Width > 0 {
		width = series[0].Hist.Width
	}
	var maxCount uint64 = 1
	var overflow bool
	for _, s := range series {
		for i, c := range s.Hist.Counts {
			if c > 0 {
				top = max(top, i+1)
			}
		}
		maxCount = max(maxCount, s.Hist.Overflow)
		overflow = overflow || s.Hist.Overflow > 0
	}
	bucketUS := float64(width) / float64(time.Microsecond)
	xMaxUS := svg.NiceStep(float64(top) * bucketUS)
	plotW := float64(svgW - svgLeft - svgRight - svgOverflowW - svgOverflowGap)
	logMax := math.Log10(1 + xMaxUS)
	x := func(us float64) float64 { return svgLeft + plotW*math.Log10(1+max(0, us))/logMax }

	// Columns: buckets merged so that no column is narrower than a pixel.
	type column struct{ from, to float64 } // µs
	var cols []column
	for i := 0; i < top; {
		j := i + 1
		for j < top && x(float64(j)*bucketUS)-x(float64(i)*bucketUS) < plotW/svgColumns {
			j++
		}
		cols = append(cols, column{float64(i) * bucketUS, float64(j) * bucketUS})
		i = j
	}
	counts := make([][]uint64, len(series))
	for k, s := range series {
		counts[k] = make([]uint64, len(cols))
		b := 0
		for c, col := range cols {
			for ; b < len(s.Hist.Counts) && float64(b)*bucketUS < col.to; b++ {
				counts[k][c] += s.Hist.Counts[b]
			}
			maxCount = max(maxCount, counts[k][c])
		}
	}

	// Percentile labels sit in a band above the plot, in order of their
	// markers, pushed apart so that none overlaps another; a leader line
	// joins each to its marker. Leaders of one row never cross each other
	// nor a label. Labels that do not fit on one row spread over more,
	// by series.
	type label struct {
		text        string
		left, right float64
		colour      string
		markerX     float64
		row         int
	}
	var labels []label
	var totalW float64
	for k, s := range series {
		if s.Hist.Count == 0 {
			continue
		}
		sum := Summarize(s.Hist)
		for _, m := range []struct {
			name string
			v    time.Duration
		}{{"p50", sum.P50}, {"p99", sum.P99}, {"p99.9", sum.P999}} {
			us := float64(m.v) / 1e3
			if us > xMaxUS {
				continue // past the bound: the overflow column shows it
			}
			text := m.name + " " + Micros(m.v)
			w := textWidth(text, svgMarkerFont)
			mx := x(us)
			labels = append(labels, label{text: text, left: mx - w/2, right: mx + w/2, colour: svg.Colour(k), markerX: mx, row: k})
			totalW += w + svgMinLabelGap
		}
	}
	usable := float64(svgW - 2*svgCanvasMargin)
	rows := min(max(1, int(math.Ceil(totalW/(0.8*usable)))), max(1, len(series)))
	if len(labels) == 0 {
		rows = 0
	}
	for r := range rows {
		var row []*label
		for i := range labels {
			if labels[i].row%rows == r {
				row = append(row, &labels[i])
			}
		}
		sort.SliceStable(row, func(i, j int) bool { return row[i].markerX < row[j].markerX })
		// left to right: no overlap, not past the left edge
		edge := float64(svgCanvasMargin)
		for _, l := range row {
			if l.left < edge {
				l.left, l.right = edge, edge+(l.right-l.left)
			}
			edge = l.right + svgMinLabelGap
		}
		// right to left: not past the right edge, still no overlap
		edge = svgW - svgCanvasMargin
		for i := len(row) - 1; i >= 0; i-- {
			l := row[i]
			if l.right > edge {
				l.left, l.right = edge-(l.right-l.left), edge
			}
			edge = l.left - svgMinLabelGap
		}
	}
	for i := range labels {
		if rows > 0 {
			labels[i].row %= rows
		}
	}
	plotTop := float64(svgMarkerBandTop + rows*svgMarkerRow + svgPlotTopClearance)
	plotBottom := plotTop + svgPlotH
	legendTop := plotBottom + svgLegendTopOffset
	svgH := int(legendTop) + max(1, len(series))*svgLegendRow + 8

	decades := math.Max(1, math.Ceil(math.Log10(float64(maxCount))))
	y := func(c uint64) float64 {
		if c == 0 {
			return plotBottom
		}
		// 1 sits a little above the axis so single outliers show
		return plotBottom - svgPlotH*(math.Log10(float64(c))+0.15)/(decades+0.15)
	}

	d := svg.New(w, svgW, svgH, svg.Sans, svgFont)
	p := d.Elem
	titleSize := math.Min(svgTitleFont, (svgW-svgLeft-svgCanvasMargin)/math.Max(1, textWidth(title, 1)))
	p(`<text x="%d" y="24" font-size="%.1f" font-weight="bold">%s</text>`, svgLeft, titleSize, svg.Escape(title))

	// axes, grid, ticks
	overflowX := svgLeft + plotW + svgOverflowGap
	p(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, svgLeft, plotBottom, svgLeft+plotW, plotBottom)
	p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#888"/>`, svgLeft, plotTop, svgLeft, plotBottom)
	for d := 0; d <= int(decades); d++ {
		c := uint64(math.Pow10(d))
		yy := y(c)
		p(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`, svgLeft, yy, svgLeft+plotW, yy)
		p(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`, svgLeft-6, yy+4, tickLabel(c))
	}
	overflowLabel := "≥" + usLabel(float64(len(firstCounts(series)))*bucketUS)
	overflowLabelLeft := overflowX + svgOverflowW/2 - textWidth(overflowLabel, svgFont)/2
	lastRight := -1e9
	for _, v := range logTicks(xMaxUS) {
		xx := x(v)
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, xx, plotBottom, xx, plotBottom+5)
		text := usLabel(v)
		half := textWidth(text, svgFont) / 2
		if xx-half < lastRight+svgMinLabelGap || xx+half > overflowLabelLeft-svgMinLabelGap {
			continue // crowded: the tick stays, its label goes
		}
		lastRight = xx + half
		p(`<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, xx, plotBottom+svgAxisLabelOffset, text)
	}
	p(`<text x="%.1f" y="%.1f" text-anchor="middle">wake-up latency (µs; log scale)</text>`, svgLeft+plotW/2, plotBottom+svgAxisTitleOffset)
	p(`<text x="16" y="%.1f" text-anchor="middle" transform="rotate(-90 16 %.1f)">samples per bucket (log)</text>`, plotTop+svgPlotH/2, plotTop+svgPlotH/2)

	// the overflow column: samples past the histogram bound
	p(`<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="#f4f4f4"/>`, overflowX, plotTop, svgOverflowW, svgPlotH)
	p(`<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, overflowX+svgOverflowW/2, plotBottom+svgAxisLabelOffset, overflowLabel)
	barW := float64(svgOverflowW-8) / float64(max(1, len(series)))
	for k, s := range series {
		if s.Hist.Overflow == 0 {
			continue
		}
		bx := overflowX + 4 + float64(k)*barW
		yy := y(s.Hist.Overflow)
		p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, bx, yy, barW, plotBottom-yy, svg.Colour(k))
	}

	// the curves
	for k := range series {
		var pts strings.Builder
		for c, col := range cols {
			yy := y(counts[k][c])
			fmt.Fprintf(&pts, "%.1f,%.1f %.1f,%.1f ", x(col.from), yy, x(col.to), yy)
		}
		p(`<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, svg.Colour(k), strings.TrimSpace(pts.String()))
	}

	// percentile markers, their leaders and labels
	for _, l := range labels {
		ly := float64(svgMarkerBandTop + (l.row+1)*svgMarkerRow - 3)
		cx := (l.left + l.right) / 2
		p(`<path fill="none" stroke="%s" stroke-dasharray="4 3" d="M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f"/>`,
			l.colour, cx, ly+3, l.markerX, plotTop, l.markerX, plotBottom)
		p(`<text x="%.1f" y="%.1f" fill="%s" font-size="%d" text-anchor="middle">%s</text>`, cx, ly, l.colour, svgMarkerFont, svg.Escape(l.text))
	}

	// the legend, under the plot
	for k, s := range series {
		colour := svg.Colour(k)
		ly := legendTop + float64(k*svgLegendRow)
		sum := Summarize(s.Hist)
		legend := fmt.Sprintf("%s: p50 %s  p99 %s  p99.9 %s  max %s µs", s.Name, Micros(sum.P50), Micros(sum.P99), Micros(sum.P999), Micros(sum.Max))
		if s.Hist.Overflow > 0 {
			legend += fmt.Sprintf(", %d past the bound", s.Hist.Overflow)
		}
		size := math.Min(svgFont, (svgW-svgLeft-18-svgCanvasMargin)/math.Max(1, textWidth(legend, 1)))
		p(`<rect x="%d" y="%.1f" width="12" height="12" fill="%s"/>`, svgLeft, ly-10, colour)
		p(`<text x="%d" y="%.1f" font-size="%.1f">%s</text>`, svgLeft+18, ly, size, svg.Escape(legend))
	}
	return d.Close()
}

// firstCounts is the bucket counts of the widest histogram: its length
// is the histograms' bound in buckets.
func firstCounts(series []Series) []uint64 {
	var c []uint64
	for _, s := range series {
		if len(s.Hist.Counts) > len(c) {
			c = s.Hist.Counts
		}
	}
	return c
}

// logTicks are 0 and 1, 2, 5 times the powers of ten up to maxUS.
func logTicks(maxUS float64) []float64 {
	ticks := []float64{0}
	for d := 1.0; d <= maxUS; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if m*d <= maxUS*(1+1e-9) {
				ticks = append(ticks, m*d)
			}
		}
	}
	return ticks
}

// usLabel writes µs compactly: 500, 2k (2 ms), 10k.
func usLabel(us float64) string {
	switch {
	case us >= 1e6 && math.Mod(us, 1e6) == 0:
		return fmt.Sprintf("%gs", us/1e6)
	case us >= 1e3 && math.Mod(us, 1e3) == 0:
		return fmt.Sprintf("%gms", us/1e3)
	}
	return strings.TrimSuffix(fmt.Sprintf("%g", us), ".0")
}

func tickLabel(c uint64) string {
	switch {
	case c >= 1e6:
		return fmt.Sprintf("%dM", c/1e6)
	case c >= 1e3:
		return fmt.Sprintf("%dk", c/1e3)
	}
	return fmt.Sprint(c)
}
