//go:build linux

package hal_test

import (
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// Another process truncates the stats segment to nothing while the
// host's threads run and publish every cycle: the host lives, its threads
// go on calling their chains, and HAL.StatsErr reports the segment lost
// (shm.ErrTruncated). The host is a child process, so that this test
// survives to see it die: before, the first store into the truncated
// segment (a function's counters) killed it with SIGBUS ("fatal error:
// fault").
func TestThreadSurvivesStatsTruncation(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	const role = "truncated-publisher"
	if rttest.ChildRole() == role {
		truncatedPublisher(t, os.Getenv("GORTAPI_TEST_DIR"))
		return
	}
	rttest.RequireSelfExec(t)
	dir := t.TempDir()
	cmd := rttest.Child(role, "-test.run=^TestThreadSurvivesStatsTruncation$", "-test.v")
	cmd.Env = append(cmd.Env, "GORTAPI_TEST_DIR="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the host: %s", out)
	assert.Contains(t, string(out), "--- PASS: TestThreadSurvivesStatsTruncation")
}

// truncatedPublisher is the host of TestThreadSurvivesStatsTruncation. It
// starts two publishing threads, has another process (this binary again,
// as "truncate") shrink the stats segment to nothing, and checks that both
// threads keep running their chains.
func truncatedPublisher(t *testing.T, dir string) {
	h := newHAL(t, hal.Options{StatsKey: 0x7b, ShmDir: dir, PublishEvery: time.Nanosecond})
	var calls [2]atomic.Int64
	threads := make([]*hal.Thread, 2)
	for i, n := range []string{"servo", "slow"} {
		th, err := h.NewThread(n, time.Duration(i+1)*time.Millisecond)
		require.NoError(t, err)
		threads[i] = th
		for _, f := range []string{n + ".a", n + ".b"} {
			_, err = h.Export(f, func(time.Duration, int64) { calls[i].Add(1) })
			require.NoError(t, err)
			require.NoError(t, h.AddFunct(f, n, hal.Last))
		}
	}
	require.NoError(t, h.Start())
	waitBeat(t, threads[1], 3)
	require.NoError(t, h.StatsErr())

	cmd := rttest.Child("truncate", filepath.Join(dir, "gortapi-0-0000007b")+":0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)

	for i, th := range threads {
		n := calls[i].Load()
		rttest.WaitFor(t, th.Name()+" calls its chain after the truncation",
			func() bool { return calls[i].Load() >= n+20 })
		assert.Equal(t, "running", th.State())
	}
	err = h.StatsErr()
	require.ErrorIs(t, err, shm.ErrTruncated)
	var te *shm.TruncatedError
	require.ErrorAs(t, err, &te)
	assert.Zero(t, te.FileSize)
	// The orphaned segment's cycles allocate nothing either.
	perCycle := testing.AllocsPerRun(50, func() {
		b := threads[0].Beat()
		for threads[0].Beat() == b {
			runtime.Gosched() // AllocsPerRun runs with GOMAXPROCS(1)
		}
	})
	assert.Zero(t, perCycle, "allocations per cycle after the loss")
	require.NoError(t, h.Stop())
	require.ErrorIs(t, h.Close(), shm.ErrTruncated)
}

// Another process truncates the stats segment while the threads do not
// run: reading the functions' counters (HAL.Stats, what a metrics scrape
// does) and ResetMax still work, and the segment is reported lost. The
// reader is a child process, so that this test survives to see it die:
// before, Funct.Stats died of SIGBUS.
func TestStatsReadSurvivesTruncation(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	const role = "truncated-reader"
	if rttest.ChildRole() == role {
		truncatedReader(t, os.Getenv("GORTAPI_TEST_DIR"))
		return
	}
	rttest.RequireSelfExec(t)
	dir := t.TempDir()
	cmd := rttest.Child(role, "-test.run=^TestStatsReadSurvivesTruncation$", "-test.v")
	cmd.Env = append(cmd.Env, "GORTAPI_TEST_DIR="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the host: %s", out)
	assert.Contains(t, string(out), "--- PASS: TestStatsReadSurvivesTruncation")
}

func truncatedReader(t *testing.T, dir string) {
	h := newHAL(t, hal.Options{StatsKey: 0x7a, ShmDir: dir})
	th, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	_, err = h.Export("servo.update", nop)
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("servo.update", "servo", hal.Last))

	cmd := rttest.Child("truncate", filepath.Join(dir, "gortapi-0-0000007a")+":0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)

	th.ResetMax()
	s := h.Stats()
	require.Len(t, s, 1)
	require.Len(t, s[0].Functs, 1)
	assert.Zero(t, s[0].Functs[0].Calls)
	require.ErrorIs(t, h.StatsErr(), shm.ErrTruncated)
	require.NoError(t, h.Start(), "the thread runs on private counters")
	waitBeat(t, th, 3)
	assert.NotZero(t, h.Stats()[0].Functs[0].Calls)
	require.NoError(t, h.Stop())
}
