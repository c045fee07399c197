package svg

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

func TestNiceStep(t *testing.T) {
	t.Parallel()
	for raw, want := range map[float64]float64{0: 1, -3: 1, math.NaN(): 1, math.Inf(1): 1, 0.3: 0.5, 1: 1, 1.2: 2, 3: 5, 7: 10, 120: 200} {
		if got := NiceStep(raw); got != want {
			t.Errorf("NiceStep(%g) = %g, want %g", raw, got, want)
		}
	}
}

func TestFit(t *testing.T) {
	t.Parallel()
	if got := Mono.Fit("short", 10, 100); got != "short" {
		t.Errorf("Fit kept %q, want it whole", got)
	}
	long := "a-very-long-signal-name-that-cannot-fit"
	got := Mono.Fit(long, 10, 60)
	if Mono.Width(got, 10) > 60 || got == long {
		t.Errorf("Fit(%q) = %q: %.1f px, want at most 60", long, got, Mono.Width(got, 10))
	}
}

// A document is well-formed XML and escapes its text.
func TestDocEscapes(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	d := New(&b, 100, 50, Sans, 12)
	d.Text(10, 20, 12, "start", Colour(9), `a <b> & "c"`)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&b)
	var text string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, b.String())
		}
		if c, ok := tok.(xml.CharData); ok {
			text += string(c)
		}
	}
	if text = strings.TrimSpace(text); text != `a <b> & "c"` {
		t.Errorf("text %q", text)
	}
}
