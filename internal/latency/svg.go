package latency

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"

	"github.com/gortapi/gortapi/internal/hist"
)

// Series is one histogram to plot.
type Series struct {
	Name string
	Hist hist.Snapshot
}

// svgColours are distinguishable on white, one per task.
var svgColours = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

const (
	svgW, svgH                         = 900, 480
	svgLeft, svgRight, svgTop, svgBott = 70, 20, 40, 60
	svgColumns                         = 450 // at most this many x steps
)

// WriteSVG plots the histograms as latency-histogram --logscale does: the
// x axis is latency in µs (linear, up to the largest bucket any series
// reached), the y axis the count per bucket on a log scale. Each series has
// its own colour and dashed markers at p50, p99 and p99.9; samples past the
// histogram bound are counted in the legend. The output is a standalone
// SVG 1.1 document.
func WriteSVG(w io.Writer, title string, series []Series) error {
	top := 1 // largest bucket index with a sample, +1
	var maxCount uint64 = 1
	for _, s := range series {
		for i, c := range s.Hist.Counts {
			if c > 0 {
				top = max(top, i+1)
			}
		}
	}
	step := max(1, (top+svgColumns-1)/svgColumns)
	cols := make([][]uint64, len(series))
	for k, s := range series {
		cols[k] = make([]uint64, (top+step-1)/step)
		for i := 0; i < top && i < len(s.Hist.Counts); i++ {
			cols[k][i/step] += s.Hist.Counts[i]
		}
		for _, c := range cols[k] {
			maxCount = max(maxCount, c)
		}
	}
	width := time.Microsecond
	if len(series) > 0 && series[0].Hist.Width > 0 {
		width = series[0].Hist.Width
	}
	xMaxUS := float64(top) * float64(width) / float64(time.Microsecond)
	decades := math.Max(1, math.Ceil(math.Log10(float64(maxCount))))
	plotW, plotH := float64(svgW-svgLeft-svgRight), float64(svgH-svgTop-svgBott)
	x := func(us float64) float64 { return svgLeft + plotW*us/xMaxUS }
	y := func(c uint64) float64 {
		if c == 0 {
			return svgTop + plotH
		}
		// 1 sits a little above the axis so single outliers show
		return svgTop + plotH - plotH*(math.Log10(float64(c))+0.15)/(decades+0.15)
	}

	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH, svgW, svgH)
	p(`<rect x="0" y="0" width="%d" height="%d" fill="white"/>`+"\n", svgW, svgH)
	p(`<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", svgLeft, html.EscapeString(title))
	// axes and grid
	p(`<g stroke="#888" stroke-width="1">` + "\n")
	p(`<line x1="%d" y1="%g" x2="%g" y2="%g"/>`+"\n", svgLeft, svgTop+plotH, svgLeft+plotW, svgTop+plotH)
	p(`<line x1="%d" y1="%d" x2="%d" y2="%g"/>`+"\n", svgLeft, svgTop, svgLeft, svgTop+plotH)
	p("</g>\n")
	for d := 0; d <= int(decades); d++ {
		c := uint64(math.Pow10(d))
		yy := y(c)
		p(`<line x1="%d" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd" stroke-width="1"/>`+"\n", svgLeft, yy, svgLeft+plotW, yy)
		p(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", svgLeft-6, yy+4, tickLabel(c))
	}
	xStep := niceStep(xMaxUS / 8)
	for v := 0.0; v <= xMaxUS+1e-9; v += xStep {
		xx := x(v)
		p(`<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#888"/>`+"\n", xx, svgTop+plotH, xx, svgTop+plotH+5)
		p(`<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", xx, svgTop+plotH+18, strings.TrimSuffix(fmt.Sprintf("%g", v), ".0"))
	}
	p(`<text x="%g" y="%d" text-anchor="middle">latency (µs)</text>`+"\n", svgLeft+plotW/2, svgH-18)
	p(`<text x="16" y="%g" text-anchor="middle" transform="rotate(-90 16 %g)">samples per bucket (log)</text>`+"\n", svgTop+plotH/2, svgTop+plotH/2)

	for k, s := range series {
		colour := svgColours[k%len(svgColours)]
		var pts strings.Builder
		for i, c := range cols[k] {
			x0, x1 := x(float64(i*step)*float64(width)/1e3), x(float64((i+1)*step)*float64(width)/1e3)
			yy := y(c)
			fmt.Fprintf(&pts, "%.1f,%.1f %.1f,%.1f ", x0, yy, x1, yy)
		}
		p(`<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", colour, strings.TrimSpace(pts.String()))
		sum := Summarize(s.Hist)
		for j, m := range []struct {
			label string
			v     time.Duration
		}{{"p50", sum.P50}, {"p99", sum.P99}, {"p99.9", sum.P999}} {
			us := float64(m.v) / 1e3
			if s.Hist.Count == 0 || us > xMaxUS {
				continue
			}
			xx := x(us)
			p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%g" stroke="%s" stroke-dasharray="4 3" stroke-width="1"/>`+"\n", xx, svgTop, xx, svgTop+plotH, colour)
			p(`<text x="%.1f" y="%d" fill="%s" font-size="10" text-anchor="middle">%s</text>`+"\n", xx, svgTop-4-10*((j+k)%2), colour, m.label)
		}
		ly := svgTop + 16 + 18*k
		lx := svgW - svgRight - 430
		p(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", lx, ly-10, colour)
		legend := fmt.Sprintf("%s: p50 %s p99 %s p99.9 %s max %s µs", s.Name, Micros(sum.P50), Micros(sum.P99), Micros(sum.P999), Micros(sum.Max))
		if s.Hist.Overflow > 0 {
			legend += fmt.Sprintf(", %d past the bound", s.Hist.Overflow)
		}
		p(`<text x="%d" y="%d">%s</text>`+"\n", lx+18, ly, html.EscapeString(legend))
	}
	p("</svg>\n")
	return bw.Flush()
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

// niceStep rounds a raw axis step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	e := math.Pow10(int(math.Floor(math.Log10(raw))))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= raw {
			return m * e
		}
	}
	return 10 * e
}
