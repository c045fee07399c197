package rtapi

import (
	"strings"
	"testing"
	"time"
)

// TestDecideShields is the shield's decision as a table: which tasks keep
// their P with procs Ps, and what each task's Stats.GCShield says. No
// root, no tasks, no sleeping. The cases follow what
// TestShieldChoosesShortestPeriods and TestShieldLeavesAPForTheRest
// checked end to end.
func TestDecideShields(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	auto := func(period time.Duration, prio int) shieldCandidate {
		return shieldCandidate{Period: period, Priority: prio, Want: true}
	}
	forced := func(period time.Duration) shieldCandidate {
		return shieldCandidate{Period: period, Priority: 98, Want: true, Forced: true}
	}
	noWant := func(period time.Duration, note string) shieldCandidate {
		return shieldCandidate{Period: period, Priority: 98, Note: note}
	}
	stopping := func(c shieldCandidate, raw bool, note string) shieldCandidate {
		c.Stopping, c.Raw, c.Note = true, raw, note
		return c
	}
	// the set of TestShieldChoosesShortestPeriods, in start order
	set := []shieldCandidate{
		auto(10*ms, 98),               // user
		auto(ms, 1),                   // servo, lowest priority
		auto(ms, 98),                  // servo-high
		auto(50*time.Microsecond, 98), // base
		noWant(ms, "off: only the nanosleep wake mode can keep its P, not timerfd"), // timerfd
		noWant(5*ms, "off: GCShield Off"),                                           // unshielded
	}
	with := func(more ...shieldCandidate) []shieldCandidate {
		return append(append([]shieldCandidate(nil), set...), more...)
	}
	const (
		on       = "on"
		gomax4   = "off: GOMAXPROCS 4, one P kept for the rest of the program, 1 kept busy"
		gomax2   = "off: GOMAXPROCS 2, one P kept for the rest of the program, 0 kept busy"
		fast     = "off: period under 500µs"
		timerfd  = "off: only the nanosleep wake mode"
		offNote  = "off: GCShield Off"
		forced3  = "on, forced; but 3 forced tasks keep their P while they sleep and 1 with periods under"
		noneFree = "off: GOMAXPROCS 1, one P kept for the rest of the program"
	)
	cases := []struct {
		name  string
		procs int
		cands []shieldCandidate
		raw   []bool
		notes []string // a prefix of each note
	}{
		{"4 Ps: one for the rest, one busy with base, two by period then priority", 4, set,
			[]bool{false, true, true, false, false, false},
			[]string{gomax4, on, on, fast, timerfd, offNote}},
		{"a forced task takes a P before any Auto one", 4, with(forced(5 * ms)),
			[]bool{false, false, true, false, false, false, true},
			[]string{gomax4, "off: GOMAXPROCS 4", on, fast, timerfd, offNote, on}},
		{"forced tasks that leave no P are served, and say so", 4, with(forced(5*ms), forced(5*ms), forced(5*ms)),
			[]bool{false, false, false, false, false, false, true, true, true},
			[]string{gomax4, "off: GOMAXPROCS 4", "off: GOMAXPROCS 4", fast, timerfd, offNote, forced3, forced3, forced3}},
		{"base ended: the forced tasks leave one P for the rest", 4,
			[]shieldCandidate{auto(10*ms, 98), auto(ms, 1), auto(ms, 98), forced(5 * ms), forced(5 * ms), forced(5 * ms)},
			[]bool{false, false, false, true, true, true},
			[]string{"off: GOMAXPROCS 4", "off: GOMAXPROCS 4", "off: GOMAXPROCS 4", on, on, on}},
		{"as many tasks as Ps: one P is left for the rest", 2, []shieldCandidate{auto(ms, 98), auto(ms, 98)},
			[]bool{true, false}, []string{on, gomax2}},
		{"one P: nothing to hand out", 1, []shieldCandidate{auto(ms, 98)}, []bool{false}, []string{noneFree}},
		{"the same period: start order decides", 3, []shieldCandidate{auto(2*ms, 50), auto(2*ms, 50), auto(2*ms, 50)},
			[]bool{true, true, false}, []string{on, on, "off: GOMAXPROCS 3"}},
		{"a stopping raw task keeps its P until it ends", 3,
			[]shieldCandidate{stopping(auto(ms, 98), true, on), auto(2*ms, 98), auto(5*ms, 98)},
			[]bool{true, true, false}, []string{on, on, "off: GOMAXPROCS 3"}},
		{"a stopping fast task still keeps a P busy", 3,
			[]shieldCandidate{stopping(auto(50*time.Microsecond, 98), false, fast), auto(ms, 98), auto(2*ms, 98)},
			[]bool{false, true, false}, []string{fast, on, "off: GOMAXPROCS 3, one P kept for the rest of the program, 1 kept busy"}},
		{"a stopping unshielded task gets nothing", 4,
			[]shieldCandidate{stopping(auto(ms, 98), false, gomax4), auto(2*ms, 98)},
			[]bool{false, true}, []string{gomax4, on}},
	}
	for _, c := range cases {
		got := decideShields(c.procs, c.cands)
		for i, v := range got {
			if v.Raw != c.raw[i] || !strings.HasPrefix(v.Note, c.notes[i]) {
				t.Errorf("%s: task %d: raw %v %q, want raw %v, a note starting %q", c.name, i, v.Raw, v.Note, c.raw[i], c.notes[i])
			}
		}
	}
}
