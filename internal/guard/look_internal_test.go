//go:build linux

package guard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A look at a thread whose task completed a cycle since the previous look
// reads its schedstat alone, and restarts both rules' stretches on that
// reading; the first look after the count stops reads its stat too. The
// thread here is one that parks, watched as apply watches it; with a
// descriptor closed, a read of it reports the thread gone.
func TestLookReadsOnlySchedstatWhileTheTaskProgresses(t *testing.T) {
	tid := parked(t)
	g := &guard{ppid: unix.Getpid(), out: -1, slots: make([]Slot, 2), table: make([]watched, 0, 1)}
	bound, timeout := int64(3*time.Millisecond), int64(time.Second)
	g.apply(record{op: opWatch, tid: uint32(tid), arg: 10, slot: 1, value: bound, value2: timeout})
	require.Len(t, g.table, 1, "watched")
	w := &g.table[0]
	defer w.close()
	w.nvKnown = true

	g.slots[1].Cycles.Store(1)
	now := w.since + bound
	require.True(t, g.check(w, now, false))
	ran, pcount, ok := g.readSchedstat(w.fd)
	require.True(t, ok)
	require.Equal(t, now, w.since, "the stretch restarts at this look")
	require.Equal(t, now, w.lastProgress)
	require.Equal(t, int64(1), w.lastCycles)
	require.Equal(t, pcount, w.pcount, "a parked thread: no switch-in since")
	require.Equal(t, ran, w.ran)
	require.Equal(t, ran, w.cpuAtProgress)
	require.False(t, w.nvKnown)

	// stat closed: a look that reads it finds the thread gone, one that
	// reads schedstat alone keeps it.
	unix.Close(w.stat)
	w.stat = -1
	g.slots[1].Cycles.Store(2)
	require.True(t, g.check(w, now+bound, false), "progress: schedstat alone")
	require.False(t, g.check(w, now+2*bound, false), "no progress: stat read, and gone")

	// A demoted thread is read whatever its count.
	w.demoted = true
	g.slots[1].Cycles.Store(3)
	require.False(t, g.check(w, now+3*bound, false), "demoted: stat read")

	// schedstat gone: gone, progress or not.
	w.demoted = false
	unix.Close(w.fd)
	w.fd = -1
	g.slots[1].Cycles.Store(4)
	require.False(t, g.check(w, now+4*bound, false), "progress, schedstat gone")
}

// A spin rule alone may name a slot beyond the page: the guard takes it
// as none, and reads the stat at every look.
func TestLookWithoutASlotReads(t *testing.T) {
	tid := parked(t)
	g := &guard{ppid: unix.Getpid(), out: -1, slots: make([]Slot, 2), table: make([]watched, 0, 1)}
	g.apply(record{op: opWatch, tid: uint32(tid), arg: 10, slot: 7, value: int64(3 * time.Millisecond)})
	require.Len(t, g.table, 1, "watched")
	w := &g.table[0]
	require.Equal(t, -1, w.slot)
	defer w.close()
	unix.Close(w.stat)
	w.stat = -1
	require.False(t, g.check(w, w.since+int64(3*time.Millisecond), false), "stat read, and gone")
}
