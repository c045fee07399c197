package hal

import "testing"

func TestOverranBlamesTheCulprit(t *testing.T) {
	const period, due = 1000, 5000 // the next release is at 5000
	for _, tc := range []struct {
		name   string
		t0, t1 int64
		want   bool
	}{
		{"ends before the release", 4000, 4900, false},
		{"ends exactly at it", 4500, 5000, false},
		{"pushes the chain past it", 4500, 5001, true},
		{"starts late, short", 5200, 5300, false},
		{"starts late, longer than a period itself", 5200, 6300, true},
		{"starts late, exactly a period", 5200, 6200, false},
		{"starts on it, runs past", 5000, 5100, true},
	} {
		if got := overran(tc.t0, tc.t1, due, period); got != tc.want {
			t.Errorf("%s: overran(%d, %d) = %v, want %v", tc.name, tc.t0, tc.t1, got, tc.want)
		}
	}
}
