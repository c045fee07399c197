package latency

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hist"
)

// wellFormed decodes the whole document and returns its element names.
func wellFormed(t *testing.T, data []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	elems := map[string]int{}
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, data)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
				if se.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root namespace %q", se.Name.Space)
				}
			}
			elems[se.Name.Local]++
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return elems
}

func TestWriteSVG(t *testing.T) {
	t.Parallel()
	a := hist.New(time.Microsecond, 10*time.Millisecond)
	b := hist.New(time.Microsecond, 10*time.Millisecond)
	for i := int64(0); i < 10000; i++ {
		a.Record(time.Duration(2_000 + i%50*100))
		b.Record(time.Duration(5_000 + i%700*1_000))
	}
	b.Record(20_000_000) // overflow
	var buf bytes.Buffer
	err := WriteSVG(&buf, `servo & base <latency>`, []Series{{"servo", a.Snapshot()}, {`base "<x>"`, b.Snapshot()}})
	if err != nil {
		t.Fatal(err)
	}
	elems := wellFormed(t, buf.Bytes())
	if elems["polyline"] != 2 {
		t.Fatalf("%d polylines, want one per series", elems["polyline"])
	}
	out := buf.String()
	for _, want := range []string{"p50", "p99.9", "1 past the bound", "#1f77b4", "#d62728", "wake-up latency (µs; log scale)", "samples per bucket (log)", "≥10ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestWriteSVGEmpty(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteSVG(&buf, "nothing", []Series{{"idle", hist.Snapshot{}}}); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, buf.Bytes())
	buf.Reset()
	if err := WriteSVG(&buf, "no series", nil); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, buf.Bytes())
}

// tailSeries is the case the plot must handle: a tight body (tens of
// µs), a tail to milliseconds, samples past the bound, two tasks whose
// percentiles fall close together.
func tailSeries() []Series {
	a := hist.New(time.Microsecond, 10*time.Millisecond)
	b := hist.New(time.Microsecond, 10*time.Millisecond)
	for i := int64(0); i < 100_000; i++ {
		a.Record(time.Duration(12_000 + i%17*1_000))
		b.Record(time.Duration(14_000 + i%23*1_000))
		if i%1000 == 0 {
			a.Record(time.Duration(200_000 + i%7*100_000))
			b.Record(time.Duration(900_000 + i%7*1_000_000))
		}
	}
	for range 3 {
		a.Record(25_000_000) // past the 10 ms bound
	}
	b.Record(12_000_000)
	return []Series{{"servo", a.Snapshot()}, {"base-thread-with-a-long-name", b.Snapshot()}}
}

// TestSVGRendersCleanly renders the plot with a real renderer (librsvg),
// then each text element alone on the same canvas, and checks from the
// pixels that every label lies inside the canvas and no two labels
// overlap. The old plot failed this: its legend ran off the right edge and
// its percentile labels collided with each other and the title.
func TestSVGRendersCleanly(t *testing.T) {
	t.Parallel()
	bin := rttest.RequireTool(t, "rsvg-convert", "apt-get install librsvg2-bin")
	var buf bytes.Buffer
	if err := WriteSVG(&buf, "synthetic wake-up latency: two tasks, tails to 7 ms, samples past the 10 ms bound", tailSeries()); err != nil {
		t.Fatal(err)
	}
	svg := buf.Bytes()
	canvas, texts := rttest.SVGInk(t, bin, svg, regexp.MustCompile(`(?m)^<text .*</text>$`))
	if size := rttest.RenderSVG(t, bin, svg).Bounds(); size != canvas {
		t.Fatalf("rendered %v for the %v canvas", size, canvas)
	}
	if len(texts) < 10 {
		t.Fatalf("only %d text elements", len(texts))
	}
	for i := range texts {
		for j := i + 1; j < len(texts); j++ {
			if texts[i].Box.Overlaps(texts[j].Box) {
				t.Errorf("labels overlap: %q %v and %q %v", texts[i].Text, texts[i].Box, texts[j].Text, texts[j].Box)
			}
		}
	}
	if t.Failed() {
		out := filepath.Join(t.TempDir(), "failed.svg")
		os.WriteFile(out, svg, 0o644)
		t.Logf("the plot: %s", out)
	}
	// the overflow is drawn, not only written in the legend: a bar per task
	// with samples past the bound
	if n := len(regexp.MustCompile(`(?m)^<rect [^>]*fill="#(1f77b4|d62728)"/>$`).FindAll(svg, -1)); n != 4 {
		t.Errorf("%d coloured rects, want 2 legend swatches and 2 overflow bars", n)
	}
}

// TestSVGLogAxisGivesTheBodyRoom: with a tail to 10 ms, the body of the
// distribution (12-29 µs) must span a readable width, not the ~20 px a
// linear axis gave it.
func TestSVGLogAxisGivesTheBodyRoom(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteSVG(&buf, "t", tailSeries()[:1]); err != nil {
		t.Fatal(err)
	}
	pts := regexp.MustCompile(`points="([^"]*)"`).FindSubmatch(buf.Bytes())[1]
	var body []float64
	for _, pt := range strings.Fields(string(pts)) {
		xy := strings.Split(pt, ",")
		x, _ := strconv.ParseFloat(xy[0], 64)
		y, _ := strconv.ParseFloat(xy[1], 64)
		if y < 300 { // high counts: the body
			body = append(body, x)
		}
	}
	if len(body) == 0 {
		t.Fatal("no body found")
	}
	if span := body[len(body)-1] - body[0]; span < 100 {
		t.Fatalf("the body spans %.0f px of the axis, want at least 100", span)
	}
}
