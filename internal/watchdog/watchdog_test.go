package watchdog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTick(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		shortest, want time.Duration
	}{
		{0, MaxTick},
		{-time.Second, MaxTick},
		{time.Microsecond, MinTick},
		{4 * time.Millisecond, MinTick},
		{20 * time.Millisecond, 5 * time.Millisecond},
		{100 * time.Millisecond, MaxTick},
		{time.Hour, MaxTick},
	} {
		require.Equal(t, tc.want, Tick(tc.shortest), "Tick(%v)", tc.shortest)
	}
}

func TestRunaway(t *testing.T) {
	t.Parallel()
	const ms = int64(time.Millisecond)
	for _, tc := range []struct {
		name                                  string
		timeout, stalled, cpuNow, cpuProgress int64
		want                                  bool
	}{
		{"spinning past its timeout", 20 * ms, 30 * ms, 100 * ms, 70 * ms, true},
		{"half the time on its CPU", 20 * ms, 30 * ms, 15 * ms, 0, true},
		{"within its timeout", 20 * ms, 20 * ms, 100 * ms, 0, false},
		{"held off its CPU", 20 * ms, 30 * ms, 14 * ms, 0, false},
		{"CPU time unreadable now", 20 * ms, 30 * ms, -1, 0, false},
		{"CPU time unreadable at progress", 20 * ms, 30 * ms, 100 * ms, -1, false},
	} {
		require.Equal(t, tc.want, Runaway(tc.timeout, tc.stalled, tc.cpuNow, tc.cpuProgress), tc.name)
	}
}

// fakeTask is a Subject whose progress a test sets.
type fakeTask struct {
	cycles int64
	ended  bool
	faults [][2]int64 // stalled, cycles
}

func (f *fakeTask) Cycles() int64 { return f.cycles }
func (f *fakeTask) Ended() bool   { return f.ended }
func (f *fakeTask) Fault(stalled, cycles int64) {
	f.faults = append(f.faults, [2]int64{stalled, cycles})
	f.ended = true
}

// runningDog is a Dog that behaves as if its loop ran, without one: Add
// only updates the list, and check is called by the test. cpu is every
// thread's CPU time.
func runningDog(cpu *int64) *Dog {
	d := New(Config{})
	d.running = true
	d.exited = make(chan struct{})
	d.reports = make(chan Subject, 16)
	d.cpuTime = func(int32) int64 { return *cpu }
	return d
}

func TestAddAndRemoveSetTheTick(t *testing.T) {
	t.Parallel()
	var cpu int64
	d := runningDog(&cpu)
	slow := &Entry{Timeout: time.Second, Subject: &fakeTask{}}
	fast := &Entry{Timeout: 20 * time.Millisecond, Subject: &fakeTask{}}
	d.Add(slow, 1)
	require.Equal(t, int64(MaxTick), d.tick.Load())
	d.Add(fast, 2)
	require.Equal(t, int64(5*time.Millisecond), d.tick.Load(), "the shortest timeout sets the tick")
	require.Equal(t, []*Entry{slow, fast}, d.Watched())
	d.Remove(fast)
	require.Equal(t, int64(MaxTick), d.tick.Load())
	d.Remove(fast) // not watched: nothing happens
	require.Equal(t, []*Entry{slow}, d.Watched())
}

func TestCheck(t *testing.T) {
	t.Parallel()
	const timeout = 20 * time.Millisecond
	for _, tc := range []struct {
		name     string
		progress bool  // a cycle completed since the last check
		idle     bool  // paused on purpose
		after    int64 // ns since the last progress
		cpu      int64 // CPU time burnt meanwhile
		fault    bool
	}{
		{"runaway", false, false, int64(2 * timeout), int64(2 * timeout), true},
		{"progressing", true, false, int64(2 * timeout), int64(2 * timeout), false},
		{"paused", false, true, int64(2 * timeout), int64(2 * timeout), false},
		{"not yet", false, false, int64(timeout), int64(timeout), false},
		{"held off its CPU", false, false, int64(2 * timeout), int64(timeout / 2), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var cpu int64
			d := runningDog(&cpu)
			task := &fakeTask{cycles: 7}
			e := &Entry{Timeout: timeout, Subject: task}
			d.Add(e, 1)
			if tc.progress {
				task.cycles++
			}
			e.Idle.Store(tc.idle)
			cpu += tc.cpu
			require.True(t, d.check(e.lastProgress+tc.after), "a live task keeps the dog running")
			if !tc.fault {
				require.Empty(t, task.faults)
				return
			}
			require.Equal(t, [][2]int64{{tc.after, 7}}, task.faults)
			require.Same(t, task, (<-d.reports).(*fakeTask), "the fault is reported")
			require.False(t, d.check(e.lastProgress+2*tc.after), "a faulted task is not faulted again, nor kept watched")
			require.Len(t, task.faults, 1)
			require.False(t, d.running)
		})
	}
}

// The Dog leaves only if the list in which it found nothing live is still
// the current one. Here an entry was added and an ended one removed
// between the scan and the exit: same length, another list, and the new
// entry must stay watched.
func TestStaysForAnEntryAddedDuringItsExit(t *testing.T) {
	t.Parallel()
	ended, added := new(Entry), new(Entry)
	d := &Dog{running: true, reports: make(chan Subject)}
	seen := &[]*Entry{ended}
	d.entries.Store(&[]*Entry{added})
	require.False(t, d.leave(seen), "left with an entry added since the scan")
	require.True(t, d.running)
	require.Equal(t, []*Entry{added}, d.Watched())

	require.True(t, d.leave(d.entries.Load()), "stayed with its list unchanged")
	require.False(t, d.running)
	require.Empty(t, d.Watched())
}

// The loop's check allocates nothing: it runs above every task, and an
// allocation could wait for the GC.
func TestCheckDoesNotAllocate(t *testing.T) {
	var cpu int64
	d := runningDog(&cpu)
	task := &fakeTask{}
	e := &Entry{Timeout: time.Hour, Subject: task}
	d.Add(e, 1)
	now := e.lastProgress
	require.Zero(t, testing.AllocsPerRun(100, func() {
		task.cycles++
		now++
		d.check(now)
	}))
}
