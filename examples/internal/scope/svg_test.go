package scope

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
)

// scopeCapture is a 20 kHz capture of a sine, a square bit and a ramp
// to large numbers, with a long pin name, triggered part-way.
func scopeCapture() (*Capture, []Trace) {
	types := []hal.Type{hal.TypeFloat, hal.TypeBit, hal.TypeS64}
	c := NewCapture(Trigger{Pin: 1, Edge: Rising, Level: 0.5}, 300, 2000, types)
	for i := 0; !c.Add(sampler.Sample{Cycle: uint64(i), Time: int64(i) * 50_000, Values: []uint64{
		math.Float64bits(10 * math.Sin(float64(i)/80)), uint64(i / 500 % 2), uint64(int64(i) * -123_456_789)}}); i++ {
	}
	return c, []Trace{{"axis.0.motor-pos-cmd", 0}, {"amp-enable", 1}, {"a-very-long-signal-name-that-cannot-fit-the-margin", 2}}
}

func TestWriteSVGWellFormed(t *testing.T) {
	t.Parallel()
	c, traces := scopeCapture()
	var b bytes.Buffer
	require.NoError(t, WriteSVG(&b, "scope", c, traces))
	d := xml.NewDecoder(&b)
	polylines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	require.Equal(t, 3, polylines)

	b.Reset()
	require.NoError(t, WriteSVG(&b, "empty", NewCapture(Trigger{}, 0, 1, nil), nil))
	require.Contains(t, b.String(), "nothing captured")
}

// TestSVGRendersCleanly renders the plot with librsvg, each element
// alone, and checks from the pixels that every label, trace and axis lies
// inside the canvas, that no two labels overlap, that each trace stays in
// its lane, and that no label lies on a trace.
func TestSVGRendersCleanly(t *testing.T) {
	t.Parallel()
	bin := rttest.RequireTool(t, "rsvg-convert", "apt-get install librsvg2-bin")
	c, traces := scopeCapture()
	var b bytes.Buffer
	require.NoError(t, WriteSVG(&b, "halscope: sampler.0, 2000 samples at 20 kHz, trigger amp-enable rising through 0.5, a long title", c, traces))
	svg := b.Bytes()
	defer func() {
		if t.Failed() {
			out := filepath.Join(t.TempDir(), "failed.svg")
			os.WriteFile(out, svg, 0o644)
			t.Logf("the plot: %s", out)
		}
	}()
	_, texts := rttest.SVGInk(t, bin, svg, regexp.MustCompile(`(?m)^<text .*</text>$`))
	require.Greater(t, len(texts), 12)
	for i := range texts {
		for j := i + 1; j < len(texts); j++ {
			if texts[i].Box.Overlaps(texts[j].Box) {
				t.Errorf("labels overlap: %q %v and %q %v", texts[i].Text, texts[i].Box, texts[j].Text, texts[j].Box)
			}
		}
	}
	_, lanes := rttest.SVGInk(t, bin, svg, regexp.MustCompile(`(?m)^<rect [^>]*stroke="#bbbbbb"[^>]*/>$`))
	_, lines := rttest.SVGInk(t, bin, svg, regexp.MustCompile(`(?m)^<polyline .*/>$`))
	_, axes := rttest.SVGInk(t, bin, svg, regexp.MustCompile(`(?m)^<line .*/>$`))
	require.Len(t, lanes, 3)
	require.Len(t, lines, 3)
	require.NotEmpty(t, axes, "ticks and the trigger line")
	for k, l := range lines {
		if !l.Box.In(lanes[k].Box.Inset(-2)) {
			t.Errorf("trace %d inks %v, outside its lane %v", k, l.Box, lanes[k].Box)
		}
		if l.Box.Dx() < lanes[k].Box.Dx()*9/10 || l.Box.Dy() < lanes[k].Box.Dy()/2 {
			t.Errorf("trace %d inks %v: it should span its lane %v", k, l.Box, lanes[k].Box)
		}
		for _, tx := range texts {
			if tx.Box.Overlaps(l.Box) {
				t.Errorf("label %q %v lies on trace %d %v", tx.Text, tx.Box, k, l.Box)
			}
		}
	}
	for _, a := range axes {
		for _, tx := range texts {
			if tx.Box.Overlaps(a.Box) {
				t.Errorf("label %q %v lies on %s %v", tx.Text, tx.Box, a.Source, a.Box)
			}
		}
	}
}
