//go:build linux

package guard

import (
	"testing"
	"time"
)

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

// TestObserve walks one thread through the guard's ticks (1 ms apart,
// bound 3 ms): a sleeper, a spinner, a thread kept waiting without CPU,
// a spin seen only across a stall of the guard itself, and a spinner and
// a sleeper on the guard's own CPU, switched in again at every tick.
func TestParseVoluntary(t *testing.T) {
	status := []byte("Name:\tlt\nState:\tR (running)\nvoluntary_ctxt_switches:\t1234\nnonvoluntary_ctxt_switches:\t99\n")
	v, ok := parseVoluntary(status)
	if !ok || v != 1234 {
		t.Errorf("parseVoluntary = %d, %v; want 1234", v, ok)
	}
	for _, bad := range []string{"", "Name:\tlt\nnonvoluntary_ctxt_switches:\t99\n", "x\nvoluntary_ctxt_switches:\t\n",
		"x\nvoluntary_ctxt_switches:\t99999999999999999999999\n"} {
		if v, ok := parseVoluntary([]byte(bad)); ok {
			t.Errorf("parseVoluntary(%q) = %d, true", bad, v)
		}
	}
}

func TestObserve(t *testing.T) {
	const ms = 1_000_000 // ns
	type tick struct {
		ran, pcount uint64
		state       byte
		stalled     bool
		want        action
		nv          uint64 // voluntary switches, when read
		nvOK        bool
	}
	for _, c := range []struct {
		name  string
		ticks []tick
	}{
		{"sleeper", []tick{{10, 2, 'S', false, keep, 0, false}, {20, 4, 'R', false, keep, 0, false}, {30, 6, 'S', false, keep, 0, false}, {40, 8, 'R', false, keep, 0, false}}},
		// The look that finds the spin marks it; the next, a tick later,
		// demotes.
		{"spinner", []tick{{1 * ms, 1, 'R', false, keep, 0, false}, {2 * ms, 1, 'R', false, keep, 0, false}, {3 * ms, 1, 'R', false, keep, 0, false},
			{4 * ms, 1, 'R', false, demote, 0, false}, {5 * ms, 1, 'R', false, keep, 0, false}, {6 * ms, 2, 'R', false, restore, 0, false}}},
		// CPU time of a running thread is added at scheduler ticks (4 ms at
		// HZ 250): a spinner's reading may stand still, then jump.
		{"spinner seen at a scheduler tick", []tick{{0, 1, 'R', false, keep, 0, false}, {0, 1, 'R', false, keep, 0, false}, {0, 1, 'R', false, keep, 0, false},
			{4 * ms, 1, 'R', false, keep, 0, false}, {4 * ms, 1, 'R', false, demote, 0, false}}},
		// Runnable for the whole bound and on the CPU for a fifth of it:
		// one of several task threads at one priority spinning in the
		// runtime's osyield, which hand the CPU round. A rule that asked
		// for a quarter of the bound let such a livelock run until RT
		// throttling (0.95 s, TestGoexitInBodyEndsTheTask in CI).
		{"spinners yielding to each other", []tick{{0, 1, 'R', false, keep, 0, false}, {0, 1, 'R', false, keep, 0, false}, {0, 1, 'R', false, keep, 0, false},
			{3 * ms / 5, 1, 'R', false, keep, 0, false}, {3 * ms / 5, 1, 'R', false, demote, 0, false}}},
		{"waiting for the CPU", []tick{{0, 1, 'R', false, keep, 0, false}, {0, 1, 'R', false, keep, 0, false}, {0, 1, 'R', false, keep, 0, false}, {0, 1, 'R', false, keep, 0, false}}},
		// Woken, on the CPU for 10 µs, then preempted and kept off it (a
		// thread above it on its CPU): not a spin (CI: "a thread that
		// sleeps every millisecond was demoted 1 times").
		{"ran a moment, then waited for the CPU", []tick{{0, 2, 'R', false, keep, 5, true}, {ms / 100, 3, 'R', false, keep, 5, true},
			{ms / 100, 3, 'R', false, keep, 0, false}, {ms / 100, 3, 'R', false, keep, 0, false}, {ms / 100, 3, 'R', false, keep, 0, false}}},
		// A stop of the host's while the thread ran counts as its CPU
		// time: the look after it finds a spin, the next finds it asleep.
		{"sleeper caught in a stop of the host's", []tick{{0, 2, 'S', false, keep, 0, false}, {10, 3, 'R', false, keep, 5, true},
			{20, 3, 'R', false, keep, 0, false}, {20, 3, 'R', false, keep, 0, false}, {4 * ms, 3, 'R', false, keep, 0, false},
			{4*ms + 10, 4, 'S', false, keep, 0, false},
			{4*ms + 20, 5, 'R', false, keep, 6, true}}},
		{"across a stall", []tick{{1 * ms, 1, 'R', false, keep, 0, false}, {2 * ms, 1, 'R', true, keep, 0, false}, {3 * ms, 1, 'R', false, keep, 0, false}, {4 * ms, 1, 'R', false, keep, 0, false},
			{5 * ms, 1, 'R', false, keep, 0, false}, {6 * ms, 1, 'R', false, demote, 0, false}}},
		// A stretch begun without the voluntary switches (the task's
		// count moved at that look): switched in again, a spinner the
		// guard preempted was on its CPU for most of it, a sleeper woken
		// again for little of it.
		{"preempted spinner, switches not counted", []tick{{1 * ms, 2, 'R', false, keep, 7, true}, {2 * ms, 3, 'R', false, keep, 7, true},
			{3 * ms, 4, 'R', false, keep, 7, true}, {4 * ms, 5, 'R', false, demote, 7, true}}},
		{"sleeper woken again, switches not counted", []tick{{0, 2, 'R', false, keep, 7, true}, {ms / 10, 3, 'R', false, keep, 8, true},
			{ms / 5, 4, 'R', false, keep, 9, true}, {ms / 4, 5, 'R', false, keep, 10, true}}},
		{"demoted for one more bound at most", []tick{{1 * ms, 1, 'R', false, keep, 0, false}, {2 * ms, 1, 'R', false, keep, 0, false}, {3 * ms, 1, 'R', false, keep, 0, false},
			{4 * ms, 1, 'R', false, demote, 0, false}, {5 * ms, 1, 'R', false, keep, 0, false}, {6 * ms, 1, 'R', false, keep, 0, false}, {7 * ms, 1, 'R', false, restore, 0, false}}},
	} {
		w := watched{bound: 3 * ms, pcount: 1}
		for i, k := range c.ticks {
			if got := w.observe(k.ran, k.pcount, k.state, k.nv, k.nvOK, int64(i+1)*ms, k.stalled); got != k.want {
				t.Errorf("%s: tick %d: observe = %d, want %d", c.name, i+1, got, k.want)
			}
		}
	}
}

// TestNextLook: the guard sleeps until the first stretch can reach its
// bound, a tick at least, three at most, and a tick while it has demoted
// a thread or has a spin to confirm.
func TestNextLook(t *testing.T) {
	const ms = int64(time.Millisecond)
	now := 100 * ms
	g := &guard{tick: ms}
	for _, c := range []struct {
		name  string
		table []watched
		want  int64
	}{
		{"nothing watched", nil, now + 3*ms},
		{"a stretch begun now", []watched{{since: now, bound: 3 * ms}}, now + 3*ms},
		{"a long bound", []watched{{since: now, bound: 50 * ms}}, now + 3*ms},
		{"a stretch 2 ms from its bound", []watched{{since: now, bound: 3 * ms}, {since: now - ms, bound: 3 * ms}}, now + 2*ms},
		{"a stretch half a tick from its bound", []watched{{since: now - 2*ms - ms/2, bound: 3 * ms}}, now + ms},
		{"past its bound, waiting for its CPU", []watched{{since: now - 5*ms, bound: 3 * ms}}, now + ms},
		{"a demoted thread", []watched{{since: now, bound: 3 * ms}, {since: now, bound: 3 * ms, demoted: true}}, now + ms},
		{"a spin to confirm", []watched{{since: now, bound: 3 * ms}, {since: now, bound: 3 * ms, suspect: true}}, now + ms},
	} {
		g.table = c.table
		if got := g.nextLook(now); got != c.want {
			t.Errorf("%s: next look in %v, want %v", c.name, time.Duration(got-now), time.Duration(c.want-now))
		}
	}
}
