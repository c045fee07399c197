package rttest

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"testing"
)

// RenderSVG renders svg to an image with rsvg-convert at bin (from
// RequireTool(t, "rsvg-convert", ...)), failing t if it cannot.
func RenderSVG(t testing.TB, bin string, svg []byte) image.Image {
	t.Helper()
	img, err := renderSVG(bin, svg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func renderSVG(bin string, svg []byte) (image.Image, error) {
	cmd := exec.Command(bin, "-f", "png")
	cmd.Stdin = bytes.NewReader(svg)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("rsvg-convert: %v\n%s", err, stderr.String())
	}
	img, err := png.Decode(&out)
	if err != nil {
		return nil, fmt.Errorf("rsvg-convert wrote no PNG: %v", err)
	}
	return img, nil
}

// renderers bounds SVGInk's concurrent rsvg-convert processes, which
// mostly wait while starting up.
const renderers = 8

// InkBox returns the bounding box of the pixels of img that are not
// transparent, and false when there are none.
func InkBox(img image.Image) (image.Rectangle, bool) {
	r := img.Bounds()
	alpha := func(x, y int) uint32 { _, _, _, a := img.At(x, y).RGBA(); return a }
	if n, ok := img.(*image.NRGBA); ok { // what rsvg-convert's PNGs decode to; At would allocate per pixel
		alpha = func(x, y int) uint32 { return uint32(n.Pix[n.PixOffset(x, y)+3]) * 0x101 }
	}
	var box image.Rectangle // Union with an empty rectangle is the other one
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if alpha(x, y) > 0x2000 {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box, !box.Empty()
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
	lines := elem.FindAll(svg, -1)
	imgs := make([]image.Image, len(lines))
	errs := make([]error, len(lines))
	var wg sync.WaitGroup
	slots := make(chan struct{}, renderers)
	for i, line := range lines {
		alone := append(append(append([]byte(nil), head[0]...), '\n'), line...)
		alone = append(alone, "\n</svg>\n"...)
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			imgs[i], errs[i] = renderSVG(bin, alone)
		})
	}
	wg.Wait()
	var out []SVGElement
	for i, line := range lines {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		e := SVGElement{Source: string(line)}
		if m := svgText.FindSubmatch(line); m != nil {
			e.Text = string(m[1])
		}
		r, ok := InkBox(imgs[i])
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
