package scope

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/gortapi/gortapi/examples/internal/svg"
)

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
	svgLabelGap    = 12 // px at least between two tick labels
	svgCanvasInset = 6
)

// textWidth and fit measure and shorten a label in the plot's font.
func textWidth(s string, size float64) float64 { return svg.Mono.Width(s, size) }
func fit(s string, size, width float64) string { return svg.Mono.Fit(s, size, width) }

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
	height := svgTop + len(traces)*(svgLaneH+svgLaneGap) - svgLaneGap + svgBottom
	if len(traces) == 0 {
		height = svgTop + svgBottom
	}
	plotL, plotR := float64(svgLeft), float64(svgW-svgRight)
	d := svg.New(w, svgW, height, svg.Mono, svgFont)
	text := func(x, y float64, size int, anchor, colour, s string) { d.Text(x, y, float64(size), anchor, colour, s) }
	text(svgW/2, 22, svgTitleFont, "middle", "black", fit(title, svgTitleFont, svgW-2*svgCanvasInset-8))

	rows := c.Rows
	if len(rows) == 0 || len(traces) == 0 {
		text(svgW/2, float64(height)-20, svgFont, "middle", "black", "nothing captured")
		return d.Close()
	}
	t0 := rows[max(c.Fired, 0)].Time
	ms := func(r Row) float64 { return float64(r.Time-t0) / 1e6 }
	tMin, tMax := ms(rows[0]), ms(rows[len(rows)-1])
	if tMax <= tMin {
		tMax = tMin + 1
	}
	x := func(t float64) float64 { return plotL + (plotR-plotL)*(t-tMin)/(tMax-tMin) }

	for k, tr := range traces {
		colour := svg.Colour(k)
		top := float64(svgTop + k*(svgLaneH+svgLaneGap))
		bottom := top + svgLaneH
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range rows {
			v := Value(c.Types[tr.Pin], r.Values[tr.Pin])
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
		d.Elem(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#bbbbbb" stroke-width="1"/>`, plotL, top, plotR-plotL, bottom-top)
		// the range's ends, right-aligned against the lane, and the name
		// between them
		text(plotL-6, y(hi)+4, svgFont, "end", "black", fit(strconv.FormatFloat(hi, 'g', 6, 64), svgFont, svgLeft-14))
		text(plotL-6, y(lo)+4, svgFont, "end", "black", fit(strconv.FormatFloat(lo, 'g', 6, 64), svgFont, svgLeft-14))
		text(svgCanvasInset+2, (top+bottom)/2+4, svgFont, "start", colour, fit(tr.Name, svgFont, svgLeft-svgCanvasInset-12))
		pts := make([]byte, 0, 32*len(rows))
		for i, r := range rows {
			v := y(Value(c.Types[tr.Pin], r.Values[tr.Pin]))
			if i > 0 {
				pts = fmt.Appendf(pts, "%.2f,%.2f ", x(ms(r)), y(Value(c.Types[tr.Pin], rows[i-1].Values[tr.Pin])))
			}
			pts = fmt.Appendf(pts, "%.2f,%.2f ", x(ms(r)), v)
		}
		d.Elem(`<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, colour, pts)
	}
	lanesBottom := float64(svgTop + len(traces)*(svgLaneH+svgLaneGap) - svgLaneGap)

	// the trigger: a dashed line through the lanes, labelled above them
	if c.Fired >= 0 {
		tx := x(0)
		d.Elem(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="black" stroke-width="1" stroke-dasharray="4,3"/>`, tx, svgTop-4, tx, lanesBottom)
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
		d.Elem(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black" stroke-width="1"/>`, tx, lanesBottom, tx, lanesBottom+5)
		text(tx, lanesBottom+19, svgFont, "middle", "black", label)
	}
	text((plotL+plotR)/2, lanesBottom+44, svgFont, "middle", "black", fit("time from the trigger (ms)", svgFont, plotR-plotL))
	return d.Close()
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
		try = svg.NiceStep((tMax - tMin) * (widest + svgLabelGap) / width)
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
