package hal

import (
	"math"
	"sync/atomic"
	"testing"
)

// A call's counters stay the calling thread's (plain fields) until it
// publishes them; its .time, .tmax and .tmax-increased are in the HAL at
// once, as LinuxCNC's thread_task writes them.
func TestAccountKeepsCountersUntilPublished(t *testing.T) {
	t.Parallel()
	f := &Funct{slot: &functSlot{}, times: privateTimes()}
	f.account(1500, true)
	if got := f.times.time.Get(); got != 1500 {
		t.Fatalf(".time after the call = %d, want 1500", got)
	}
	if got := f.times.tmax.Get(); got != 1500 || !f.times.increased.Get() {
		t.Fatalf(".tmax after the call = %d, increased %v; want 1500, true", got, f.times.increased.Get())
	}
	if s := f.Stats(); s.Calls != 0 || s.Time != 0 || s.TMax != 0 || s.Overruns != 0 {
		t.Fatalf("the stats slot changed before a publication: %+v", s)
	}
	f.publishAcct()
	if s := f.Stats(); s.Calls != 1 || s.Time != 1500 || s.TMax != 1500 || s.Overruns != 1 {
		t.Fatalf("published: %+v, want 1 call of 1500 ns, tmax 1500, 1 overrun", s)
	}
}

// lcncTimes is LinuxCNC's thread_task for one function (hal_lib.c):
// runtime = hal_set_si32(funct->runtime, end - start); maxtime raised
// when exceeded, maxtime_increased set on every call.
type lcncTimes struct {
	runtime, maxtime int32
	increased        bool
}

func (l *lcncTimes) call(d int64) {
	l.runtime = int32(d)
	if l.runtime > l.maxtime {
		l.maxtime = l.runtime
		l.increased = true
	} else {
		l.increased = false
	}
}

// The HAL items follow LinuxCNC's thread_task call by call, through
// setp of .tmax and 32-bit truncation; the published counters follow
// .tmax down after a setp and count every call.
func TestAccountFollowsLinuxCNCThreadTask(t *testing.T) {
	t.Parallel()
	f := &Funct{slot: &functSlot{}, times: privateTimes()}
	var want lcncTimes
	var calls int64
	for i, step := range []struct {
		setp    int32 // setp NAME.tmax before the call, when >= 0
		d       int64
		slotMax int64 // the published TMax after the call
	}{
		{-1, 100, 100},
		{-1, 50, 100},
		{-1, 100, 100}, // equal: not raised
		{0, 30, 30},    // setp .tmax 0: raised, the published worst follows down
		{-1, 40, 40},
		{2000000000, 60, 60}, // a worst no call reaches: not raised
		{-1, 0, 60},
		{0, 0, 60},                         // 0 does not raise 0
		{-1, 1<<33 + 5, 1<<33 + 5},         // .time truncates to 32 bits as hal_set_si32 does
		{-1, math.MaxInt32 + 1, 1<<33 + 5}, // wraps negative: not raised
	} {
		if step.setp >= 0 {
			f.times.tmax.Set(step.setp)
			want.maxtime = step.setp
		}
		f.account(step.d, false)
		want.call(step.d)
		calls++
		got := lcncTimes{f.times.time.Get(), f.times.tmax.Get(), f.times.increased.Get()}
		if got != want {
			t.Fatalf("call %d (%d ns): .time, .tmax, .tmax-increased = %+v, LinuxCNC's %+v", i, step.d, got, want)
		}
		f.publishAcct()
		if s := f.Stats(); int64(s.TMax) != step.slotMax || int64(s.Time) != step.d || s.Calls != calls {
			t.Fatalf("call %d: published %+v, want time %d, tmax %d, calls %d", i, s, step.d, step.slotMax, calls)
		}
	}
}

// ResetMax zeroes the published worst time for good, also when no call
// takes time (the sim flavor): the thread's own copy follows at its next
// call or publication.
func TestResetMaxReachesTheThreadsCopy(t *testing.T) {
	t.Parallel()
	f := &Funct{slot: &functSlot{}, times: privateTimes()}
	f.account(700, false)
	f.publishAcct()
	// What Thread.ResetMax does to each function of its chain.
	reset := func() {
		f.resets.Add(1)
		atomic.StoreInt64(&f.slot.TMax, 0)
		f.times.tmax.Set(0)
	}
	reset()
	f.publishAcct() // no call since
	if s := f.Stats(); s.TMax != 0 {
		t.Fatalf("TMax published after ResetMax without a call = %v, want 0", s.TMax)
	}
	f.account(300, false)
	reset()
	f.account(0, false)
	f.publishAcct()
	if s := f.Stats(); s.TMax != 0 || s.Calls != 3 {
		t.Fatalf("after ResetMax and a call of 0 ns: %+v, want TMax 0, 3 calls", s)
	}
}

// The per-call accounting and a publication allocate nothing.
func TestAccountAndPublishDoNotAllocate(t *testing.T) {
	f := &Funct{slot: &functSlot{}, times: privateTimes()}
	var d int64
	if a := testing.AllocsPerRun(1000, func() {
		d++
		f.account(d&1023, d&63 == 0)
		f.publishAcct()
	}); a != 0 {
		t.Fatalf("account and publishAcct allocate %v times", a)
	}
}
