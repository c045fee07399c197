package main

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// colours are distinguishable on white, one per trace.
var colours = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

const (
	svgW           = 900
	svgLeft        = 170 // lane names and value labels
	svgRight       = 24
	svgTop         = 56 // title, then the trigger label
	svgLaneH       = 110
	svgLaneGap     = 18
	svgBottom      = 60 // tick labels and the axis title
	svgFont        = 12
	svgTitleFont   = 15
	svgCharWidth   = 0.62 // upper bound of a monospace glyph's advance, in em
	svgLabelGap    = 12   // px at least between two tick labels
	svgCanvasInset = 6
)

// textWidth bounds the rendered width of s at size px in monospace.
func textWidth(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s)) * svgCharWidth * size
}

// fit shortens s with an ellipsis until it is at most width px wide.
func fit(s string, size, width float64) string {
	if textWidth(s, size) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && textWidth(string(r)+"…", size) > width {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// Trace is one pin to plot: its name and index in the capture's rows.
type Trace struct {
	Name string
	Pin  int
}

// WriteSVG plots a capture as halscope shows one: each trace in its own
// lane, scaled to its own range (the range's ends labelled left of the
// lane), over a shared time axis in ms from the trigger, which a dashed
// line marks. Values are held from one sample to the next, as the thread
// held them. Labels sit outside the lanes, so no trace crosses one. The
// output is a standalone SVG 1.1 document, one element per line.
func WriteSVG(w io.Writer, title string, c *Capture, traces []Trace) error {
	bw := bufio.NewWriter(w)
	height := svgTop + len(traces)*(svgLaneH+svgLaneGap) - svgLaneGap + svgBottom
	if len(traces) == 0 {
		height = svgTop + svgBottom
	}
	plotL, plotR := float64(svgLeft), float64(svgW-svgRight)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace">`+"\n", svgW, height, svgW, height)
	fmt.Fprintf(bw, `<rect x="0" y="0" width="%d" height="%d" fill="white"/>`+"\n", svgW, height)
	text := func(x, y float64, size int, anchor, colour, s string) {
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" fill="%s">%s</text>`+"\n", x, y, size, anchor, colour, html.EscapeString(s))
	}
	text(svgW/2, 22, svgTitleFont, "middle", "black", fit(title, svgTitleFont, svgW-2*svgCanvasInset-8))

	rows := c.Rows
	if len(rows) == 0 || len(traces) == 0 {
		text(svgW/2, float64(height)-20, svgFont, "middle", "black", "nothing captured")
		fmt.Fprintln(bw, `</svg>`)
		return bw.Flush()
	}
	t0 := rows[max(c.Fired, 0)].Time
	ms := func(r Row) float64 { return float64(r.Time-t0) / 1e6 }
	tMin, tMax := ms(rows[0]), ms(rows[len(rows)-1])
	if tMax <= tMin {
		tMax = tMin + 1
	}
	x := func(t float64) float64 { return plotL + (plotR-plotL)*(t-tMin)/(tMax-tMin) }

	for k, tr := range traces {
		colour := colours[k%len(colours)]
		top := float64(svgTop + k*(svgLaneH+svgLaneGap))
		bottom := top + svgLaneH
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range rows {
			v := value(c.Types[tr.Pin], r.Values[tr.Pin])
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if lo > hi { // nothing finite
			lo, hi = -1, 1
		}
		if hi == lo {
			lo, hi = lo-1, hi+1
		}
		pad := (hi - lo) * 0.06
		y := func(v float64) float64 {
			v = math.Max(lo-pad, math.Min(hi+pad, v))
			return bottom - (bottom-top)*(v-(lo-pad))/(hi-lo+2*pad)
		}
		fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#bbbbbb" stroke-width="1"/>`+"\n", plotL, top, plotR-plotL, bottom-top)
		// the range's ends, right-aligned against the lane, and the name
		// between them
		text(plotL-6, y(hi)+4, svgFont, "end", "black", fit(strconv.FormatFloat(hi, 'g', 6, 64), svgFont, svgLeft-14))
		text(plotL-6, y(lo)+4, svgFont, "end", "black", fit(strconv.FormatFloat(lo, 'g', 6, 64), svgFont, svgLeft-14))
		text(svgCanvasInset+2, (top+bottom)/2+4, svgFont, "start", colour, fit(tr.Name, svgFont, svgLeft-svgCanvasInset-12))
		fmt.Fprintf(bw, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="`, colour)
		for i, r := range rows {
			v := y(value(c.Types[tr.Pin], r.Values[tr.Pin]))
			if i > 0 {
				fmt.Fprintf(bw, "%.2f,%.2f ", x(ms(r)), y(value(c.Types[tr.Pin], rows[i-1].Values[tr.Pin])))
			}
			fmt.Fprintf(bw, "%.2f,%.2f ", x(ms(r)), v)
		}
		fmt.Fprintln(bw, `"/>`)
	}
	lanesBottom := float64(svgTop + len(traces)*(svgLaneH+svgLaneGap) - svgLaneGap)

	// the trigger: a dashed line through the lanes, labelled above them
	if c.Fired >= 0 {
		tx := x(0)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="black" stroke-width="1" stroke-dasharray="4,3"/>`+"\n", tx, svgTop-4, tx, lanesBottom)
		label := "trigger"
		half := textWidth(label, svgFont) / 2
		text(math.Max(plotL+half, math.Min(plotR-half, tx)), svgTop-8, svgFont, "middle", "black", label)
	}

	// the time axis: ticks at a step whose labels cannot meet
	step := tickStep(tMin, tMax, plotR-plotL)
	for t := math.Ceil(tMin/step) * step; t <= tMax+step*1e-9; t += step {
		tx := x(t)
		label := tickLabel(t, step)
		half := textWidth(label, svgFont) / 2
		if tx-half < svgCanvasInset || tx+half > svgW-svgCanvasInset {
			continue
		}
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black" stroke-width="1"/>`+"\n", tx, lanesBottom, tx, lanesBottom+5)
		text(tx, lanesBottom+19, svgFont, "middle", "black", label)
	}
	text((plotL+plotR)/2, lanesBottom+44, svgFont, "middle", "black", fit("time from the trigger (ms)", svgFont, plotR-plotL))
	fmt.Fprintln(bw, `</svg>`)
	return bw.Flush()
}

// tickStep is the step of the time axis's ticks: the smallest nice step
// at which labels as wide as the widest (with that step's decimals) keep
// svgLabelGap apart. A larger step has no more decimals, so keeping the
// largest step tried is safe.
func tickStep(tMin, tMax, width float64) float64 {
	step := 0.0
	try := (tMax - tMin) / 10
	for range 4 {
		widest := math.Max(textWidth(tickLabel(tMin, try), svgFont), textWidth(tickLabel(tMax, try), svgFont))
		try = niceStep((tMax - tMin) * (widest + svgLabelGap) / width)
		step = math.Max(step, try)
	}
	return step
}

// tickLabel prints t with as many decimals as step needs.
func tickLabel(t, step float64) string {
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step)))
	}
	if math.Abs(t) < step*1e-6 {
		t = 0
	}
	return strconv.FormatFloat(t, 'f', dec, 64)
}

// niceStep rounds raw up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}
