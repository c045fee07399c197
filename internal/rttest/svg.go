package rttest

import (
	"bytes"
	"image"
	"image/png"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// RenderSVG renders svg to an image with rsvg-convert at bin (from
// RequireTool(t, "rsvg-convert", ...)), failing t if it cannot.
func RenderSVG(t testing.TB, bin string, svg []byte) image.Image {
	t.Helper()
	cmd := exec.Command(bin, "-f", "png")
	cmd.Stdin = bytes.NewReader(svg)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("rsvg-convert: %v\n%s", err, stderr.String())
	}
	img, err := png.Decode(&out)
	if err != nil {
		t.Fatalf("rsvg-convert wrote no PNG: %v", err)
	}
	return img
}

// InkBox returns the bounding box of the pixels of img that are not
// transparent, and false when there are none.
func InkBox(img image.Image) (image.Rectangle, bool) {
	r := img.Bounds()
	box, found := image.Rectangle{}, false
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a > 0x2000 {
				p := image.Rect(x, y, x+1, y+1)
				if !found {
					box, found = p, true
				} else {
					box = box.Union(p)
				}
			}
		}
	}
	return box, found
}

// SVGElement is one element of an SVG document and where it inks.
type SVGElement struct {
	Source string          // the element's line
	Text   string          // a text element's content, else ""
	Box    image.Rectangle // the bounding box of its pixels
}

var (
	svgHead = regexp.MustCompile(`<svg [^>]*width="(\d+)" height="(\d+)"[^>]*>`)
	svgText = regexp.MustCompile(`>(.*)</text>`)
)

// SVGInk renders each line of svg (a document written one element per
// line) that matches elem alone, on a transparent canvas of the
// document's size, and returns where each inks. It fails t for an element
// that inks nothing or touches the canvas's edge, and returns the canvas.
func SVGInk(t testing.TB, bin string, svg []byte, elem *regexp.Regexp) (image.Rectangle, []SVGElement) {
	t.Helper()
	head := svgHead.FindSubmatch(svg)
	if head == nil {
		t.Fatal("no <svg> element with a width and a height")
	}
	w, _ := strconv.Atoi(string(head[1]))
	h, _ := strconv.Atoi(string(head[2]))
	canvas := image.Rect(0, 0, w, h)
	var out []SVGElement
	for _, line := range elem.FindAll(svg, -1) {
		alone := append(append(append([]byte(nil), head[0]...), '\n'), line...)
		alone = append(alone, "\n</svg>\n"...)
		e := SVGElement{Source: string(line)}
		if m := svgText.FindSubmatch(line); m != nil {
			e.Text = string(m[1])
		}
		r, ok := InkBox(RenderSVG(t, bin, alone))
		if !ok {
			t.Errorf("%s renders nothing", line)
			continue
		}
		if !r.In(canvas.Inset(1)) {
			t.Errorf("%s inks %v: touches or leaves the %v canvas", line, r, canvas)
		}
		e.Box = r
		out = append(out, e)
	}
	return canvas, out
}
