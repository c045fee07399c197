// Package svg is the example programs' one SVG writer: a standalone SVG
// 1.1 document written one element per line (so that a test can render
// each element alone and check where it inks), the colours of its
// series, a bound on the width of a label, and the axes' nice steps.
// latency-test's histogram plot (examples/internal/latency) and halscope's
// capture plot draw with it.
package svg

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"unicode/utf8"
)

// colours are distinguishable on white, one per series.
var colours = [...]string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// Colour is the colour of series k (k ≥ 0), repeating after eight.
func Colour(k int) string { return colours[k%len(colours)] }

// Font is a document's font family and a bound on its glyphs' advance.
type Font struct {
	Family    string
	CharWidth float64 // upper bound of a glyph's advance, in em
}

// The two fonts the plots use.
var (
	Sans = Font{"DejaVu Sans, Verdana, sans-serif", 0.68}
	Mono = Font{"monospace", 0.62}
)

// Width bounds the rendered width of s at size px.
func (f Font) Width(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s)) * f.CharWidth * size
}

// Fit shortens s with an ellipsis until it is at most width px wide at
// size px.
func (f Font) Fit(s string, size, width float64) string {
	if f.Width(s, size) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && f.Width(string(r)+"…", size) > width {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// Doc is an SVG document being written. Write errors are kept by the
// buffered writer and returned by Close.
type Doc struct {
	bw   *bufio.Writer
	Font Font
}

// New starts a width × height document on w in font at size px, on a
// white background.
func New(w io.Writer, width, height int, font Font, size int) *Doc {
	d := &Doc{bw: bufio.NewWriter(w), Font: font}
	d.Elem(`<?xml version="1.0" encoding="UTF-8"?>`)
	d.Elem(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" font-size="%d">`,
		width, height, width, height, font.Family, size)
	d.Elem(`<rect x="0" y="0" width="%d" height="%d" fill="white"/>`, width, height)
	return d
}

// Elem writes one element (format as fmt.Sprintf, without the newline).
// Text in it must already be escaped (Escape).
func (d *Doc) Elem(format string, args ...any) {
	fmt.Fprintf(d.bw, format, args...)
	d.bw.WriteByte('\n')
}

// Text writes s, escaped, at (x, y) in size px, anchored start, middle
// or end, in colour fill.
func (d *Doc) Text(x, y, size float64, anchor, fill, s string) {
	d.Elem(`<text x="%.1f" y="%.1f" font-size="%.1f" text-anchor="%s" fill="%s">%s</text>`, x, y, size, anchor, fill, Escape(s))
}

// Close ends the document and flushes it; it returns the first write
// error.
func (d *Doc) Close() error {
	d.Elem("</svg>")
	return d.bw.Flush()
}

// Escape makes s safe as an element's text or an attribute's value.
func Escape(s string) string { return html.EscapeString(s) }

// NiceStep rounds raw up to 1, 2 or 5 times a power of ten (1 for a raw
// that is not a positive number).
func NiceStep(raw float64) float64 {
	if !(raw > 0) || math.IsInf(raw, 0) {
		return 1
	}
	e := math.Pow10(int(math.Floor(math.Log10(raw))))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= raw*(1-1e-9) {
			return m * e
		}
	}
	return 10 * e
}
