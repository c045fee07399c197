package rtapi

import (
	"testing"

	"golang.org/x/sys/unix"
)

// AcceptTraceFSOf makes the trace hook accept, until t ends, the file
// system that dir is on as if it were tracefs: tests' fake trace
// directories are plain directories.
func AcceptTraceFSOf(t testing.TB, dir string) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	extraTraceMagic.Store(int64(st.Type))
	t.Cleanup(func() { extraTraceMagic.Store(0) })
}

// SettledStatsReads counts t's Stats reads that raced a wake-up
// wakeupTries times and settled for the last read (Late may then lag
// Latency.Count by the wake-ups recorded meanwhile).
func SettledStatsReads(t *Task) int64 { return t.stats.settled.Load() }
