package latency

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hist"
)

func TestFormatThreadLineMatchesCyclictest(t *testing.T) {
	t.Parallel()
	// lines printed by cyclictest 2.40 on the development VM
	for _, c := range []struct {
		l    ThreadLine
		want string
	}{
		{ThreadLine{0, 30829, 80, 1000, 1000, 26, 61, 72, 724, false},
			"T: 0 (30829) P:80 I:1000 C:   1000 Min:     26 Act:   61 Avg:   72 Max:     724"},
		{ThreadLine{1, 30850, 80, 1500, 618, 21, 72, 90, 2882, false},
			"T: 1 (30850) P:80 I:1500 C:    618 Min:     21 Act:   72 Avg:   90 Max:    2882"},
		{ThreadLine{12, 7, 5, 100, 12345678, 1, 2, 3, 123456789, false},
			"T:12 (    7) P: 5 I:100 C:12345678 Min:      1 Act:    2 Avg:    3 Max:123456789"},
		// cyclictest -N (ns)
		{ThreadLine{0, 9028, 80, 1000, 100, 53277, 73374, 100378, 868787, true},
			"T: 0 ( 9028) P:80 I:1000 C:    100 Min:  53277 Act:   73374 Avg:  100378 Max:  868787"},
	} {
		if got := FormatThreadLine(c.l); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

func TestLineOf(t *testing.T) {
	t.Parallel()
	h := hist.New(time.Microsecond, time.Millisecond)
	for _, ns := range []int64{3_400, 5_900, 41_200} {
		h.Record(time.Duration(ns))
	}
	ts := TaskStats{Tid: 42, Act: 5_900}
	ts.Latency, ts.Priority, ts.Period = h.Snapshot(), 98, time.Millisecond
	got := FormatThreadLine(LineOf(0, ts))
	want := "T: 0 (   42) P:98 I:1000 C:      3 Min:      3 Act:    5 Avg:   16 Max:      41"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// jsonShape is a JSON document's key structure: objects become their
// keys' shapes, the keys of "thread" (numbers) become "N", a histogram
// is one value, other values become their JSON type.
func jsonShape(v any, parent string) any {
	switch v := v.(type) {
	case map[string]any:
		if parent == "histogram" {
			for _, x := range v {
				if _, ok := x.(float64); !ok {
					return "histogram with a non-number count"
				}
			}
			return "bucket→count" // empty when no sample fell within the bound
		}
		out := map[string]any{}
		for k, x := range v {
			if parent == "thread" {
				k = "N" // numbered entries: the union of their shapes
				out[k] = mergeShapes(out[k], jsonShape(x, parent+"/N"))
				continue
			}
			out[k] = jsonShape(x, k)
		}
		return out
	case float64:
		return "number"
	case string:
		return "string"
	}
	return fmt.Sprintf("%T", v)
}

func mergeShapes(a, b any) any {
	ma, ok1 := a.(map[string]any)
	mb, ok2 := b.(map[string]any)
	if !ok1 || !ok2 {
		return b
	}
	out := map[string]any{}
	for k, v := range ma {
		out[k] = v
	}
	for k, v := range mb {
		out[k] = mergeShapes(out[k], v)
	}
	return out
}

func shapeOf(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return jsonShape(v, "")
}

// TestCyclictestJSONLayout: WriteCyclictestJSON's document has the key
// structure of cyclictest --json, both the captured one and one that the
// installed cyclictest writes now.
func TestCyclictestJSONLayout(t *testing.T) {
	h := hist.New(time.Microsecond, 30*time.Microsecond)
	for _, ns := range []int64{8_100, 15_000, 15_500, 331_000} {
		h.Record(time.Duration(ns))
	}
	ts := TaskStats{}
	ts.Latency = h.Snapshot()
	var out bytes.Buffer
	err := WriteCyclictestJSON(&out, CyclictestRun{Cmdline: "latency-test -format cyclictest", Version: "gortapi",
		Start: time.Now(), End: time.Now(), Tasks: []TaskStats{ts, ts}, Histogram: true})
	if err != nil {
		t.Fatal(err)
	}
	got := shapeOf(t, out.Bytes())
	var doc struct {
		Thread map[string]struct {
			Histogram map[string]uint64
			Cycles    int64
			Min, Max  int64
			Avg       float64
		}
		StartTime string `json:"start_time"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	th := doc.Thread["1"]
	if th.Cycles != 4 || th.Min != 8 || th.Max != 331 || th.Avg != 92.4 || th.Histogram["15"] != 2 || th.Histogram["8"] != 1 || len(th.Histogram) != 2 {
		t.Fatalf("thread 1: %+v", th)
	}
	if _, err := time.Parse(rtTestsTime, doc.StartTime); err != nil {
		t.Fatalf("start_time %q: %v", doc.StartTime, err)
	}

	captured, err := os.ReadFile("testdata/cyclictest-2.40-h30.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := shapeOf(t, captured); !reflect.DeepEqual(got, want) {
		t.Fatalf("key structure differs from the captured cyclictest --json\ngot  %v\nwant %v", got, want)
	}

	// The capture is compared already; a live run needs cyclictest, which
	// refuses to start where it may not set a real-time policy, even
	// without -p.
	bin := rttest.RequireTool(t, "cyclictest", "apt-get install rt-tests")
	rttest.RequireRT(t)
	file := filepath.Join(t.TempDir(), "ct.json")
	// SCHED_OTHER, 100 loops, one thread (with two, -l can stop the second
	// before its first cycle, and cyclictest then writes "avg": -nan, not JSON)
	if out, err := exec.Command(bin, "-i", "1000", "-l", "100", "-h", "5000", "-q", "--json="+file).CombinedOutput(); err != nil {
		t.Fatalf("cyclictest: %v\n%s", err, out)
	}
	live, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := shapeOf(t, live); !reflect.DeepEqual(got, want) {
		t.Fatalf("key structure differs from cyclictest --json run now\ngot  %v\nwant %v\n%s", got, want, live)
	}
}
