//go:build linux

package spinguard

import "testing"

func TestParseSchedstat(t *testing.T) {
	for _, c := range []struct {
		in          string
		ran, pcount uint64
		ok          bool
	}{
		{"235566882 64175386 164\n", 235566882, 164, true},
		{"0 0 0\n", 0, 0, true},
		{"1 2 3", 1, 3, true},
		{"", 0, 0, false},
		{"12 34\n", 0, 0, false},
		{"x 1 2\n", 0, 0, false},
		{"99999999999999999999999 1 2\n", 0, 0, false},
	} {
		ran, pcount, ok := parseSchedstat([]byte(c.in))
		if ran != c.ran || pcount != c.pcount || ok != c.ok {
			t.Errorf("parseSchedstat(%q) = %d, %d, %v; want %d, %d, %v", c.in, ran, pcount, ok, c.ran, c.pcount, c.ok)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	r := record{op: opWatch, tid: 1234, arg: 80, value: -5}
	var b [recordSize]byte
	r.put(&b)
	if got := getRecord(b[:]); got != r {
		t.Errorf("round trip %+v -> %+v", r, got)
	}
}

func TestParseState(t *testing.T) {
	for _, c := range []struct {
		in    string
		state byte
		ok    bool
	}{
		{"123 (rtapi.test) R 1 2 3", 'R', true},
		{"123 (a) b) S 1", 'S', true},
		{"123 (x y) D 0", 'D', true},
		{"123 (noend R 1", 0, false},
		{"123 (x)", 0, false},
		{"", 0, false},
	} {
		state, ok := parseState([]byte(c.in))
		if state != c.state || ok != c.ok {
			t.Errorf("parseState(%q) = %q, %v; want %q, %v", c.in, state, ok, c.state, c.ok)
		}
	}
}
