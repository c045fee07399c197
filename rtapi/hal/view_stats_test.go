//go:build linux

package hal_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/shm"
)

func TestMonitorReadsPublishedRecords(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	const key = 0x4a1
	h := newHAL(t, hal.Options{StatsKey: key, ShmDir: dir})
	assert.Equal(t, "/gortapi-0-000004a1", h.StatsSegment())
	base, err := h.NewThread("base", 100*time.Microsecond)
	require.NoError(t, err)
	servo, err := h.NewThread("servo", 1040*time.Microsecond)
	require.NoError(t, err)
	for _, n := range []string{"siggen.0.update", "pid.0.do-pid-calcs"} {
		_, err := h.Export(n, func(time.Duration, int64) { rtapi.Delay(2 * time.Microsecond) })
		require.NoError(t, err)
		require.NoError(t, h.AddFunct(n, "servo", hal.Last))
	}

	m, err := hal.OpenView(hal.ViewOptions{StatsKey: key, Dir: dir})
	require.NoError(t, err)
	defer m.Close()
	assert.False(t, m.HostGone())

	s, err := m.Read()
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), s.HostPID)
	assert.Equal(t, 100*time.Microsecond, s.BasePeriod)
	require.Len(t, s.Threads, 2)
	assert.Equal(t, "created", s.Threads[0].State)
	assert.Equal(t, "servo", s.Threads[1].Name)
	assert.Equal(t, time.Millisecond, s.Threads[1].Period)
	assert.Equal(t, 1040*time.Microsecond, s.Threads[1].Requested)

	require.NoError(t, h.Start())
	waitBeat(t, servo, 20)
	waitBeat(t, base, 20)
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err = m.Read()
		require.NoError(t, err)
		if s.Threads[1].Beat >= 10 && s.Threads[1].Functs[1].Calls >= 10 {
			break
		}
		require.True(t, time.Now().Before(deadline), "servo never published 10 cycles: %+v", s.Threads[1])
		time.Sleep(time.Millisecond)
	}
	st := s.Threads[1]
	assert.Equal(t, "running", st.State)
	assert.Equal(t, servo.Priority(), st.Priority)
	require.Len(t, st.Functs, 2)
	assert.Equal(t, "siggen.0.update", st.Functs[0].Name)
	assert.Equal(t, "pid.0.do-pid-calcs", st.Functs[1].Name)
	assert.GreaterOrEqual(t, st.Functs[1].TMax, 2*time.Microsecond)
	assert.LessOrEqual(t, st.Beat, servo.Beat(), "published values never run ahead of the thread")

	// A removal shows up in the published chain.
	require.NoError(t, h.RemoveFunct("siggen.0.update", "servo"))
	for {
		s, err = m.Read()
		require.NoError(t, err)
		if len(s.Threads[1].Functs) == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "removal never published")
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, "pid.0.do-pid-calcs", s.Threads[1].Functs[0].Name)

	require.NoError(t, h.Stop())
	s, err = m.Read()
	require.NoError(t, err)
	assert.Equal(t, "stopped", s.Threads[1].State)
	assert.Equal(t, servo.Beat(), s.Threads[1].Beat, "the final record is exact")

	require.NoError(t, h.Close())
	s, err = m.Read()
	require.NoError(t, err, "the mapping stays valid after the host removed the segment")
	assert.True(t, s.HostClosed)
	require.NoError(t, m.Close())
	_, err = m.Read()
	require.ErrorIs(t, err, rtapi.ErrClosed)
	require.ErrorIs(t, m.Close(), rtapi.ErrClosed)
	assert.True(t, m.HostGone())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the last detach removed the segment")
}

func TestMonitorMisuse(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	_, err := hal.OpenView(hal.ViewOptions{Dir: dir})
	require.ErrorIs(t, err, rtapi.ErrInvalid, "key required")
	_, err = hal.OpenView(hal.ViewOptions{StatsKey: 7, Dir: dir})
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = hal.OpenView(hal.ViewOptions{StatsKey: 7, Dir: dir, Group: "no-such-group-gortapi"})
	require.ErrorIs(t, err, rtapi.ErrInvalid, "unknown group")
	_, err = hal.OpenView(hal.ViewOptions{StatsKey: 7, Dir: dir, AllowUIDs: []int{-1}})
	require.ErrorIs(t, err, rtapi.ErrInvalid, "negative uid")

	seg, err := shm.Create(shm.Options{Dir: dir}, 8, 4096)
	require.NoError(t, err)
	defer seg.Delete()
	_, err = hal.OpenView(hal.ViewOptions{StatsKey: 8, Dir: dir})
	require.ErrorIs(t, err, rtapi.ErrInvalid, "a segment of another size")
	assert.Contains(t, err.Error(), "not")

	// Right size, wrong contents.
	h := newHAL(t, hal.Options{StatsKey: 9, ShmDir: dir})
	size := sizeOfStats(t, dir, 9)
	require.NoError(t, h.Close())
	junk, err := shm.Create(shm.Options{Dir: dir}, 10, size)
	require.NoError(t, err)
	defer junk.Delete()
	_, err = hal.OpenView(hal.ViewOptions{StatsKey: 10, Dir: dir})
	require.ErrorIs(t, err, shm.ErrNotInitialised, "a zeroed segment: a host that has not written its header yet")
	require.NotErrorIs(t, err, hal.ErrCorrupt)
}

func sizeOfStats(t *testing.T, dir string, key uint32) int {
	t.Helper()
	seg, err := shm.Attach(shm.Options{Dir: dir}, key)
	require.NoError(t, err)
	defer seg.Close()
	return seg.Size()
}

func TestStatsSegmentOfLiveHostIsRefused(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	h := newHAL(t, hal.Options{StatsKey: 0x55, ShmDir: dir})
	_, err := hal.New(h.RT(), hal.Options{StatsKey: 0x55, ShmDir: dir})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.ErrorIs(t, err, os.ErrExist)
	assert.Contains(t, err.Error(), "running process")
}

func TestStaleStatsSegmentIsReplaced(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	cmd := rttest.Child("leave-segment", dir+":0x77")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)
	_, err = os.Stat(filepath.Join(dir, "gortapi-0-00000077"))
	require.NoError(t, err, "the dead child left its segment")

	h := newHAL(t, hal.Options{StatsKey: 0x77, ShmDir: dir})
	m, err := hal.OpenView(hal.ViewOptions{StatsKey: 0x77, Dir: dir})
	require.NoError(t, err)
	s, err := m.Read()
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), s.HostPID, "the segment is ours now")
	require.NoError(t, m.Close())
	require.NoError(t, h.Close())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// Another process truncates the stats segment under a Monitor: Read
// reports shm.ErrTruncated and the monitoring process lives. Before,
// the first Read after the truncation ended it with "fatal error: fault"
// (SIGBUS).
func TestMonitorSurvivesTruncation(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	h := newHAL(t, hal.Options{StatsKey: 0x7c, ShmDir: dir})
	_, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	m, err := hal.OpenView(hal.ViewOptions{StatsKey: 0x7c, Dir: dir})
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Read()
	require.NoError(t, err)

	cmd := rttest.Child("truncate", filepath.Join(dir, "gortapi-0-0000007c")+":4096")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)

	s, err := m.Read()
	require.ErrorIs(t, err, shm.ErrTruncated)
	assert.Empty(t, s.Threads)
	var te *shm.TruncatedError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, int64(4096), te.FileSize)
	assert.NotZero(t, te.Fault, "the header page survived: the thread records faulted")
	_, err = m.Read()
	require.ErrorIs(t, err, shm.ErrTruncated, "and again, without dying")
	assert.True(t, m.HostGone(), "a truncated segment is a host gone")
	require.NoError(t, h.Close())
}

// A stats segment another user planted at the key is refused by the
// monitor and by a host, which does not remove it as if it were stale.
func TestForeignStatsSegmentRefused(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	rttest.RequireRoot(t, "chowns a segment file to another user")
	dir := t.TempDir()
	h := newHAL(t, hal.Options{StatsKey: 0x7d, ShmDir: dir})
	path := filepath.Join(dir, "gortapi-0-0000007d")
	require.NoError(t, os.Chown(path, 65534, 65534))
	_, err := hal.OpenView(hal.ViewOptions{StatsKey: 0x7d, Dir: dir})
	require.ErrorIs(t, err, shm.ErrUntrusted)
	m, err := hal.OpenView(hal.ViewOptions{StatsKey: 0x7d, Dir: dir, AllowUIDs: []int{65534}})
	require.NoError(t, err, "an allowed owner")
	require.NoError(t, m.Close())
	require.NoError(t, h.Close()) // Delete removes it whoever owns it

	// Planted with a dead creator: a host refuses it instead of replacing it.
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	require.NoError(t, os.Chown(path, 65534, 65534))
	_, err = hal.New(openRT(t, rtapi.Options{}), hal.Options{StatsKey: 0x7d, ShmDir: dir})
	require.ErrorIs(t, err, shm.ErrUntrusted)
	_, err = os.Stat(path)
	require.NoError(t, err, "left for its owner or an administrator to remove")
}

// Issue 38, 2: the group reads the data and stats segments and only the
// host writes them (mode 0640); changes go through the socket. Before,
// both were 0660 and a member could store into any pin.
func TestSegmentsShmGroupReadOnly(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	rttest.RequireRoot(t, "gives a segment to another group")
	dir := t.TempDir()
	h := newHAL(t, hal.Options{StatsKey: 0x7e, DataKey: 0x7f, ShmDir: dir, ShmGroup: "65534"})
	for _, f := range []string{"gortapi-0-0000007e", "gortapi-0-0000007f"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), f)
	}
	require.NoError(t, h.Close())
}

// A second process writes random and chosen values into every part of a
// running host's stats segment while this one reads it with a Monitor: the
// reader only ever sees data or ErrCorrupt, and each Read returns.
func TestMonitorUnderHostileWriter(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	h := newHAL(t, hal.Options{StatsKey: 0x7f, ShmDir: dir, PublishEvery: time.Nanosecond})
	for _, n := range []string{"a", "b"} {
		_, err := h.NewThread(n, time.Millisecond)
		require.NoError(t, err)
		_, err = h.Export(n+".update", func(time.Duration, int64) {})
		require.NoError(t, err)
		require.NoError(t, h.AddFunct(n+".update", n, hal.Last))
	}
	require.NoError(t, h.Start())
	m, err := hal.OpenView(hal.ViewOptions{StatsKey: 0x7f, Dir: dir})
	require.NoError(t, err)
	defer m.Close()

	cmd := rttest.Child("scribble", filepath.Join(dir, "gortapi-0-0000007f")+":3000000")
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var reads, corrupt int
	for finished := false; !finished; {
		select {
		case err := <-done:
			require.NoError(t, err)
			finished = true
		default:
		}
		_, err := m.Read()
		reads++
		if err != nil {
			require.ErrorIs(t, err, hal.ErrCorrupt)
			corrupt++
		}
	}
	t.Logf("%d reads while the writer ran, %d reported corruption", reads, corrupt)
	assert.NotZero(t, corrupt, "the writer did corrupt the segment")
	require.NoError(t, h.Stop())
}

// Another process truncates the stats segment to nothing while the host
// is idle: NewThread, Stop and Close write the segment outside a thread's
// cycle, and the host lives through all three; Close reports
// shm.ErrTruncated and still removes the segment. Before, HAL.Close died
// of SIGBUS marking the header closed.
func TestHALCloseSurvivesTruncation(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	h, err := hal.New(openRT(t, rtapi.Options{}), hal.Options{StatsKey: 0x7d, ShmDir: dir})
	require.NoError(t, err)
	_, err = h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)

	cmd := rttest.Child("truncate", filepath.Join(dir, "gortapi-0-0000007d")+":0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)

	_, err = h.NewThread("slow", 10*time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, h.Stop())
	require.ErrorIs(t, h.Close(), shm.ErrTruncated)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the segment is removed all the same")
	require.NoError(t, h.Close(), "and Close after Close is nil")
}
