package latency

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
)

// ErrSpec marks every parse error in this file: bad user input. It
// matches rtapi.ErrInvalid too.
var ErrSpec error = specError{}

type specError struct{}

func (specError) Error() string        { return "bad specification" }
func (specError) Is(target error) bool { return target == rtapi.ErrInvalid }

func specErrf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, args...))
}

// TaskDef is one measurement task: a name and a period. Priority 0 means
// "assign rate-monotonically" (see AssignPriorities).
type TaskDef struct {
	Name     string
	Period   time.Duration
	Priority int
}

// ParseThreads parses a LinuxCNC-style thread list such as
// "servo=1ms,base=25us": comma-separated name=period pairs, periods as Go
// durations (a bare number is microseconds, as cyclictest -i). Names must be
// unique and non-empty.
func ParseThreads(spec string) ([]TaskDef, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, specErrf("empty -threads list (want e.g. servo=1ms,base=25us)")
	}
	var defs []TaskDef
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		name, period, ok := strings.Cut(strings.TrimSpace(item), "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, specErrf("thread %q: want name=period, e.g. servo=1ms", item)
		}
		if seen[name] {
			return nil, specErrf("thread %q named twice", name)
		}
		seen[name] = true
		d, err := ParseMicros(period)
		if err != nil {
			return nil, specErrf("thread %q: %v", name, err)
		}
		if d <= 0 {
			return nil, specErrf("thread %q: period must be positive, got %v", name, d)
		}
		defs = append(defs, TaskDef{Name: name, Period: d})
	}
	return defs, nil
}

// ParseMicros parses a duration given either as a Go duration ("25us",
// "1ms") or as a bare number of microseconds ("1000"), cyclictest's unit.
func ParseMicros(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > int64(time.Hour/time.Microsecond) {
			return 0, fmt.Errorf("%s µs is out of range", s)
		}
		return time.Duration(n) * time.Microsecond, nil
	}
	d, err := time.ParseDuration(strings.ReplaceAll(s, "µ", "u"))
	if err != nil {
		return 0, fmt.Errorf("duration %q: want microseconds (1000) or a Go duration (1ms, 25us)", s)
	}
	return d, nil
}

// ParseLinuxCNCPeriod parses a period as LinuxCNC's latency-test does:
// with a suffix ns, us, µs, ms or s; without one, a number below 1000 is
// µs and any other ns; "-" is 0 (no such thread).
func ParseLinuxCNCPeriod(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "-" {
		return 0, nil
	}
	unit, num := time.Duration(0), s
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"ns", time.Nanosecond}, {"us", time.Microsecond}, {"µs", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}} {
		if strings.HasSuffix(s, u.suffix) {
			unit, num = u.unit, strings.TrimSuffix(s, u.suffix)
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !(f > 0) || f > 1e12 {
		return 0, specErrf("period %q: want e.g. 25us, 1ms, 25000 (ns) or 25 (µs below 1000)", s)
	}
	if unit == 0 {
		unit = time.Nanosecond
		if f < 1000 {
			unit = time.Microsecond
		}
	}
	d := time.Duration(f * float64(unit))
	if d <= 0 || d > time.Hour {
		return 0, specErrf("period %q out of range", s)
	}
	return d, nil
}

// LinuxCNCThreads are the tasks of LinuxCNC's latency-test [base
// [servo]]: base (default 25 µs) and servo (default 1 ms), the shorter
// one as base; base "-", or equal to servo, runs the servo thread only,
// as does servoOnly.
func LinuxCNCThreads(args []string, servoOnly bool) ([]TaskDef, error) {
	base, servo := 25*time.Microsecond, time.Millisecond
	var err error
	switch {
	case len(args) > 2:
		return nil, specErrf("LinuxCNC's form takes at most two periods: latency-test [base-period [servo-period]]")
	case servoOnly && len(args) == 2:
		return nil, specErrf("-s runs the servo thread only: give one period at most")
	case servoOnly && len(args) == 1:
		if servo, err = ParseLinuxCNCPeriod(args[0]); err == nil && servo == 0 {
			err = specErrf("-s: the servo period cannot be \"-\"")
		}
		base = 0
	case servoOnly:
		base = 0
	case len(args) >= 1:
		if base, err = ParseLinuxCNCPeriod(args[0]); err == nil && len(args) == 2 {
			servo, err = ParseLinuxCNCPeriod(args[1])
			if err == nil && servo == 0 {
				err = specErrf("the servo period cannot be \"-\"")
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if base > servo {
		base, servo = servo, base
	}
	if base == servo {
		base = 0
	}
	defs := []TaskDef{{Name: "servo", Period: servo}}
	if base > 0 {
		defs = append(defs, TaskDef{Name: "base", Period: base})
	}
	return defs, nil
}

// ParseRunDuration parses -D as cyclictest does: a bare number is seconds,
// a suffix m, h or d means minutes, hours or days; Go durations ("1.5s",
// "500ms") work too. Zero means "until interrupted".
func ParseRunDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, specErrf("empty duration")
	}
	unit := time.Second
	num := s
	switch s[len(s)-1] { // "ms", "us" and "ns" end in 's' and fall to ParseDuration
	case 'm':
		unit, num = time.Minute, s[:len(s)-1]
	case 'h':
		unit, num = time.Hour, s[:len(s)-1]
	case 'd':
		unit, num = 24*time.Hour, s[:len(s)-1]
	}
	if f, err := strconv.ParseFloat(num, 64); err == nil {
		// !(f >= 0) also refuses NaN, which compares false to everything
		if !(f >= 0) || f*float64(unit) > float64(100*24*time.Hour) {
			return 0, specErrf("duration %q out of range", s)
		}
		return time.Duration(f * float64(unit)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, specErrf("duration %q: want seconds (10), 10s, 5m, 1h or 0 for until Ctrl-C", s)
	}
	return d, nil
}

// LoadKind names a load generator.
type LoadKind string

// Load kinds.
const (
	// LoadAlloc: goroutines in this process allocating Rate bytes a second
	// and keeping a rolling working set alive, so the GC has work: the
	// Go-specific danger to a real-time task.
	LoadAlloc LoadKind = "alloc"
	// LoadHRTimers: N threads sleeping 4 ms in clock_nanosleep, their
	// expiries aligned: a storm of hrtimer interrupts.
	LoadHRTimers LoadKind = "hrtimers"
	// LoadCPU: N goroutines spinning.
	LoadCPU LoadKind = "cpu"
)

// Load is one -load item.
type Load struct {
	Kind LoadKind
	// Rate in bytes per second (alloc).
	Rate int64
	// N threads or goroutines (hrtimers, cpu).
	N int
}

func (l Load) String() string {
	switch l.Kind {
	case LoadAlloc:
		return fmt.Sprintf("alloc=%s/s", FormatBytes(l.Rate))
	default:
		return fmt.Sprintf("%s=%d", l.Kind, l.N)
	}
}

// MaxAllocRate and MaxLoadThreads bound -load so a typo cannot take the
// machine down.
const (
	MaxAllocRate   = 64 << 30
	MaxLoadThreads = 4096
)

// ParseLoad parses "alloc=200MB/s", "hrtimers=100" or "cpu=2".
func ParseLoad(s string) (Load, error) {
	kind, arg, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok || arg == "" {
		return Load{}, specErrf("load %q: want alloc=200MB/s, hrtimers=100 or cpu=N", s)
	}
	switch LoadKind(kind) {
	case LoadAlloc:
		rate, err := ParseRate(arg)
		if err != nil {
			return Load{}, specErrf("load %q: %v", s, err)
		}
		if rate <= 0 || rate > MaxAllocRate {
			return Load{}, specErrf("load %q: rate must be in (0, 64GB/s]", s)
		}
		return Load{Kind: LoadAlloc, Rate: rate}, nil
	case LoadHRTimers, LoadCPU:
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 || n > MaxLoadThreads {
			return Load{}, specErrf("load %q: want a count between 1 and %d", s, MaxLoadThreads)
		}
		return Load{Kind: LoadKind(kind), N: n}, nil
	}
	return Load{}, specErrf("unknown load %q (valid: alloc=RATE/s, hrtimers=N, cpu=N)", kind)
}

// ParseRate parses a byte rate such as "200MB/s", "1GiB/s" or "500k" (the
// "/s" is optional). Units: B, k/KB (1000), KiB (1024), M/MB, MiB, G/GB, GiB.
func ParseRate(s string) (int64, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/s")
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("rate %q: want a number and a unit, e.g. 200MB/s", s)
	}
	mult := map[string]float64{
		"": 1, "B": 1,
		"k": 1e3, "K": 1e3, "kB": 1e3, "KB": 1e3, "KiB": 1 << 10,
		"M": 1e6, "MB": 1e6, "MiB": 1 << 20,
		"G": 1e9, "GB": 1e9, "GiB": 1 << 30,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("rate %q: unknown unit %q (B, KB, KiB, MB, MiB, GB, GiB)", s, unit)
	}
	return int64(f * mult), nil
}

// FormatBytes writes a byte count with a decimal unit (200MB).
func FormatBytes(n int64) string {
	switch {
	case n >= 1e9 && n%1e7 == 0:
		return strconv.FormatFloat(float64(n)/1e9, 'f', -1, 64) + "GB"
	case n >= 1e6 && n%1e4 == 0:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "MB"
	case n >= 1e3 && n%10 == 0:
		return strconv.FormatFloat(float64(n)/1e3, 'f', -1, 64) + "KB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Body is a task body of known cost: each cycle busy-waits Busy on the
// task's clock (a calibrated loop), so execution-time jitter shows.
type Body struct {
	Busy time.Duration
}

// ParseBody parses "busy=50us" (a bare number is microseconds).
func ParseBody(s string) (Body, error) {
	kind, arg, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok || kind != "busy" {
		return Body{}, specErrf("body %q: want busy=DURATION, e.g. busy=50us", s)
	}
	d, err := ParseMicros(arg)
	if err != nil || d <= 0 {
		return Body{}, specErrf("body %q: want a positive duration, e.g. busy=50us", s)
	}
	return Body{Busy: d}, nil
}

// AssignPriorities gives tasks without a priority rate-monotonic ones, as
// LinuxCNC's hal_create_thread does: the shortest period gets highest, each
// longer period the next lower, never below lowest.
func AssignPriorities(defs []TaskDef, highest, lowest int) {
	order := make([]int, len(defs))
	for i := range order {
		order[i] = i
	}
	// stable insertion sort by period: lists are short
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && defs[order[j]].Period < defs[order[j-1]].Period; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	p := highest
	for k, i := range order {
		if k > 0 && defs[i].Period != defs[order[k-1]].Period {
			p = max(lowest, p-1)
		}
		if defs[i].Priority == 0 {
			defs[i].Priority = p
		}
	}
}

// ParseCPUList parses a CPU list as cyclictest -a and the kernel write it:
// "1", "0,2", "2-3,5", with kerneldetect's bounded parser. A CPU the
// machine does not have is refused later, when the task is created.
func ParseCPUList(s string) ([]int, error) {
	cpus, err := kerneldetect.ParseCPUList(s)
	if err == nil && len(cpus) == 0 {
		err = fmt.Errorf("empty CPU list")
	}
	if err != nil {
		return nil, specErrf("%v", err)
	}
	return cpus, nil
}
