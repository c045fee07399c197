package latency

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/hist"
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
	a := hist.New(time.Microsecond, 10*time.Millisecond)
	b := hist.New(time.Microsecond, 10*time.Millisecond)
	for i := int64(0); i < 10000; i++ {
		a.Record(2_000 + i%50*100)
		b.Record(5_000 + i%700*1_000)
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
	for _, want := range []string{"p50", "p99.9", "1 past the bound", "#1f77b4", "#d62728", "latency (µs)", "samples per bucket (log)"} {
		if !strings.Contains(out, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestWriteSVGEmpty(t *testing.T) {
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

func TestNiceStep(t *testing.T) {
	for raw, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 1.2: 2, 3: 5, 7: 10, 120: 200} {
		if got := niceStep(raw); got != want {
			t.Errorf("niceStep(%g) = %g, want %g", raw, got, want)
		}
	}
}
