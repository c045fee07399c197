package latency

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gortapi/gortapi/rtapi"
)

func TestParseThreads(t *testing.T) {
	t.Parallel()
	got, err := ParseThreads("servo=1ms, base=25us,slow=2000")
	if err != nil {
		t.Fatal(err)
	}
	want := []TaskDef{{Name: "servo", Period: time.Millisecond}, {Name: "base", Period: 25 * time.Microsecond}, {Name: "slow", Period: 2 * time.Millisecond}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "servo", "=1ms", "servo=", "servo=fast", "servo=1ms,servo=2ms", "servo=-1ms", "servo=0"} {
		if _, err := ParseThreads(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("ParseThreads(%q) = %v, want ErrSpec", bad, err)
		}
	}
}

func TestParseMicros(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"1000": time.Millisecond, "25us": 25 * time.Microsecond, "25µs": 25 * time.Microsecond, " 2ms ": 2 * time.Millisecond, "0": 0,
	} {
		got, err := ParseMicros(in)
		if err != nil || got != want {
			t.Errorf("ParseMicros(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1x", "ms", "99999999999999"} {
		if _, err := ParseMicros(bad); err == nil {
			t.Errorf("ParseMicros(%q) succeeded", bad)
		}
	}
}

func TestParseRunDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"10": 10 * time.Second, "0": 0, "1.5": 1500 * time.Millisecond, "5m": 5 * time.Minute, "2h": 2 * time.Hour,
		"1d": 24 * time.Hour, "500ms": 500 * time.Millisecond, "30s": 30 * time.Second, "1m30s": 90 * time.Second,
	} {
		got, err := ParseRunDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseRunDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	// NaN and Inf parse as floats: NaN once ran for ever with a negative
	// duration in the JSON (issue 20, item 11)
	for _, bad := range []string{"", "-1", "ten", "1y", "-5s", "1000d", "NaN", "nan", "NaNm", "Inf", "+Inf", "-Inf", "infinity", "1e300"} {
		if _, err := ParseRunDuration(bad); !errors.Is(err, ErrSpec) || !errors.Is(err, rtapi.ErrInvalid) {
			t.Errorf("ParseRunDuration(%q) = %v, want ErrSpec and rtapi.ErrInvalid", bad, err)
		}
	}
}

func TestParseLoad(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Load{
		"alloc=200MB/s":  {Kind: LoadAlloc, Rate: 200e6},
		"alloc=1GiB/s":   {Kind: LoadAlloc, Rate: 1 << 30},
		"alloc=512KiB":   {Kind: LoadAlloc, Rate: 512 << 10},
		"hrtimers=100":   {Kind: LoadHRTimers, N: 100},
		"cpu=2":          {Kind: LoadCPU, N: 2},
		" alloc=1.5MB/s": {Kind: LoadAlloc, Rate: 1.5e6},
	} {
		got, err := ParseLoad(in)
		if err != nil || got != want {
			t.Errorf("ParseLoad(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "alloc", "alloc=", "alloc=fast", "alloc=10XB/s", "alloc=0MB/s", "alloc=100GB/s",
		"hrtimers=0", "hrtimers=x", "cpu=-1", "cpu=100000", "disk=1"} {
		if _, err := ParseLoad(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("ParseLoad(%q) = %v, want ErrSpec", bad, err)
		}
	}
	if s := (Load{Kind: LoadAlloc, Rate: 200e6}).String(); s != "alloc=200MB/s" {
		t.Errorf("String = %q", s)
	}
	if s := (Load{Kind: LoadHRTimers, N: 100}).String(); s != "hrtimers=100" {
		t.Errorf("String = %q", s)
	}
}

func TestParseBody(t *testing.T) {
	t.Parallel()
	b, err := ParseBody("busy=50us")
	if err != nil || b.Busy != 50*time.Microsecond {
		t.Fatalf("ParseBody = %+v, %v", b, err)
	}
	for _, bad := range []string{"", "busy", "busy=", "busy=0", "sleep=5us", "busy=x"} {
		if _, err := ParseBody(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("ParseBody(%q) = %v, want ErrSpec", bad, err)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]int{"1": {1}, "0,2": {0, 2}, "2-4,7": {2, 3, 4, 7}} {
		got, err := ParseCPUList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "1,,2", "99999", "0-20000000"} {
		if _, err := ParseCPUList(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("ParseCPUList(%q) = %v, want ErrSpec", bad, err)
		}
	}
}

func TestAssignPriorities(t *testing.T) {
	t.Parallel()
	defs := []TaskDef{
		{Name: "slow", Period: 10 * time.Millisecond},
		{Name: "base", Period: 25 * time.Microsecond},
		{Name: "servo", Period: time.Millisecond},
		{Name: "servo2", Period: time.Millisecond},
		{Name: "fixed", Period: time.Second, Priority: 7},
	}
	AssignPriorities(defs, 90, 1)
	got := map[string]int{}
	for _, d := range defs {
		got[d.Name] = d.Priority
	}
	want := map[string]int{"base": 90, "servo": 89, "servo2": 89, "slow": 88, "fixed": 7}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("priorities %v, want %v", got, want)
	}
	low := []TaskDef{{Name: "a", Period: 1}, {Name: "b", Period: 2}, {Name: "c", Period: 3}}
	AssignPriorities(low, 2, 1)
	if low[2].Priority != 1 {
		t.Fatalf("priority went below the lowest: %+v", low)
	}
}

func FuzzParseThreads(f *testing.F) {
	for _, s := range []string{"servo=1ms,base=25us", "a=1", "=", ",", "x=1ms,x=2ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		defs, err := ParseThreads(s)
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("error %v is not ErrSpec", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, d := range defs {
			if d.Name == "" || d.Period <= 0 || seen[d.Name] {
				t.Fatalf("accepted bad definition %+v in %q", d, s)
			}
			seen[d.Name] = true
		}
	})
}

func TestLinuxCNCThreads(t *testing.T) {
	t.Parallel()
	us, ms := time.Microsecond, time.Millisecond
	for _, c := range []struct {
		args        []string
		servoOnly   bool
		servo, base time.Duration
	}{
		{nil, false, ms, 25 * us},
		{[]string{"50us"}, false, ms, 50 * us},
		{[]string{"25us", "1ms"}, false, ms, 25 * us},
		{[]string{"1ms", "25us"}, false, ms, 25 * us}, // swapped, as LinuxCNC does
		{[]string{"25000", "1000000"}, false, ms, 25 * us},
		{[]string{"25", "500µs"}, false, 500 * us, 25 * us},
		{[]string{"-", "2ms"}, false, 2 * ms, 0},
		{[]string{"1ms", "1ms"}, false, ms, 0},
		{[]string{"0.5ms", "1.5ms"}, false, 1500 * us, 500 * us},
		{nil, true, ms, 0},
		{[]string{"500us"}, true, 500 * us, 0},
	} {
		defs, err := LinuxCNCThreads(c.args, c.servoOnly)
		want := []TaskDef{{Name: "servo", Period: c.servo}}
		if c.base > 0 {
			want = append(want, TaskDef{Name: "base", Period: c.base})
		}
		if err != nil || !reflect.DeepEqual(defs, want) {
			t.Errorf("%q (-s %v): %+v, %v; want %+v", c.args, c.servoOnly, defs, err, want)
		}
	}
	for _, c := range []struct {
		args      []string
		servoOnly bool
	}{
		{[]string{"1", "2", "3"}, false}, {[]string{"fast"}, false}, {[]string{"0"}, false}, {[]string{"-1ms"}, false},
		{[]string{"NaN"}, false}, {[]string{"25us", "-"}, false}, {[]string{"-"}, true}, {[]string{"1ms", "2ms"}, true}, {[]string{"2h"}, false},
	} {
		if _, err := LinuxCNCThreads(c.args, c.servoOnly); !errors.Is(err, ErrSpec) {
			t.Errorf("%q (-s %v): %v, want ErrSpec", c.args, c.servoOnly, err)
		}
	}
}
