package rtapi_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
)

// fakeTraceDir is a directory of plain files named as tracefs's: the hook
// writes into them as it would into the kernel's, accepting the temporary
// directory's file system as tracefs until t ends.
func fakeTraceDir(t *testing.T) string {
	dir := t.TempDir()
	for _, f := range []string{"trace_marker", "tracing_on"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o600))
	}
	rtapi.AcceptTraceFSOf(t, dir)
	return dir
}

// A TraceDir that is not a tracefs is refused with ErrInvalid, its files
// untouched: root must not write trace_marker and tracing_on in a
// directory another user made (issue #37 item 4).
func TestTraceDirMustBeTracefs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"trace_marker", "tracing_on"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("victim"), 0o600))
	}
	rt := open(t, rtapi.Options{Flavor: "posix"})
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "plain", Period: 200 * time.Microsecond,
		TraceMark: time.Nanosecond, TraceStop: true, TraceDir: dir}, loop)
	require.NoError(t, err)
	err = task.Start()
	if err == nil {
		task.Stop()
		task.Wait()
	}
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.Contains(t, err.Error(), "not a tracefs")
	for _, f := range []string{"trace_marker", "tracing_on"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		require.Equal(t, "victim", string(b), f)
	}
}

// A symlink at trace_marker or tracing_on is not followed, even in a
// tracefs: ErrInvalid, and the file behind it is untouched.
func TestTraceFileSymlinkNotFollowed(t *testing.T) {
	for _, link := range []string{"trace_marker", "tracing_on"} {
		t.Run(link, func(t *testing.T) {
			dir := fakeTraceDir(t)
			victim := filepath.Join(t.TempDir(), "victim")
			require.NoError(t, os.WriteFile(victim, []byte("victim"), 0o600))
			require.NoError(t, os.Remove(filepath.Join(dir, link)))
			require.NoError(t, os.Symlink(victim, filepath.Join(dir, link)))
			rt := open(t, rtapi.Options{Flavor: "posix"})
			task, err := rt.NewTask(rtapi.TaskSpec{Name: "linked", Period: 200 * time.Microsecond,
				TraceMark: time.Nanosecond, TraceStop: true, TraceDir: dir}, loop)
			require.NoError(t, err)
			err = task.Start()
			if err == nil {
				rttest.WaitFor(t, "a trace marker", func() bool { return task.Stats().TraceMarks > 0 })
				task.Stop()
				task.Wait()
			}
			require.ErrorIs(t, err, rtapi.ErrInvalid)
			b, err := os.ReadFile(victim)
			require.NoError(t, err)
			require.Equal(t, "victim", string(b))
		})
	}
}

// runUntilMarked runs a trace-hooked task until it has written a marker.
func runUntilMarked(t *testing.T, rt *rtapi.RT, spec rtapi.TaskSpec) rtapi.Stats {
	t.Helper()
	task, err := rt.NewTask(spec, loop)
	require.NoError(t, err)
	require.NoError(t, task.Start())
	rttest.WaitFor(t, "a trace marker", func() bool {
		s := task.Stats()
		return s.TraceMarks > 0 && (!spec.TraceStop || s.TraceStopCycle > 0)
	})
	task.Stop()
	require.NoError(t, task.Wait())
	return task.Stats()
}

func TestTraceMarkMisuse(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	for _, spec := range []rtapi.TaskSpec{
		{Name: "neg", Period: time.Millisecond, TraceMark: -1},
		{Name: "stop", Period: time.Millisecond, TraceStop: true},
		{Name: "dir", Period: time.Millisecond, TraceDir: "/x"},
		{Name: "big", Period: time.Millisecond, TraceMark: rtapi.MaxPeriod + 1},
	} {
		_, err := rt.NewTask(spec, loop)
		require.ErrorIs(t, err, rtapi.ErrInvalid, "%+v", spec)
	}
	// No tracefs there: Start refuses, and the task can be named again.
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "nodir", Period: time.Millisecond, TraceMark: time.Microsecond,
		TraceDir: filepath.Join(t.TempDir(), "none")}, loop)
	require.NoError(t, err)
	require.ErrorIs(t, task.Start(), rtapi.ErrNotSupported)

	// The sim flavor refuses a trace hook: its wake-ups are virtual.
	sim := rttest.Open(t, func() (*rtapi.RT, error) { return rtapi.Open(rtapi.Options{Flavor: "sim"}) })
	_, err = sim.NewTask(rtapi.TaskSpec{Name: "sim", Period: time.Millisecond, TraceMark: time.Microsecond}, loop)
	require.ErrorIs(t, err, rtapi.ErrNotSupported)
}

func TestTraceMarkNotWritableIsErrPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes any file: run unprivileged for ErrPermission")
	}
	dir := fakeTraceDir(t)
	require.NoError(t, os.Chmod(filepath.Join(dir, "trace_marker"), 0o400))
	rt := open(t, rtapi.Options{Flavor: "posix"})
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "ro", Period: time.Millisecond, TraceMark: time.Microsecond, TraceDir: dir}, loop)
	require.NoError(t, err)
	require.ErrorIs(t, task.Start(), rtapi.ErrPermission)
}

// The hook writes one line per late wake-up in the documented format, and
// with TraceStop writes "0" to tracing_on once.
func TestTraceMarkWritesMarkerLines(t *testing.T) {
	dir := fakeTraceDir(t)
	rt := open(t, rtapi.Options{Flavor: "posix"})
	s := runUntilMarked(t, rt, rtapi.TaskSpec{Name: "marked", Period: 200 * time.Microsecond,
		TraceMark: time.Nanosecond, TraceStop: true, TraceDir: dir})
	b, err := os.ReadFile(filepath.Join(dir, "trace_marker"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.EqualValues(t, s.TraceMarks, len(lines))
	require.Regexp(t, `^gortapi: task marked late [0-9]+ns cycle [0-9]+$`, lines[0])
	require.Contains(t, lines[0], " cycle "+itoa(s.TraceStopCycle))
	require.Positive(t, s.TraceStopLatency)
	on, err := os.ReadFile(filepath.Join(dir, "tracing_on"))
	require.NoError(t, err)
	require.Equal(t, "0", string(on))
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// A marker costs the cycle no allocation.
func TestTraceMarkAllocatesNothing(t *testing.T) {
	dir := fakeTraceDir(t)
	rt := open(t, rtapi.Options{Flavor: "posix"})
	res := make(chan float64, 1)
	var task *rtapi.Task
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "allocs", Period: 100 * time.Microsecond,
		TraceMark: time.Nanosecond, TraceStop: true, TraceDir: dir},
		func(tc *rtapi.TaskContext) error {
			for i := 0; i < 10; i++ {
				tc.WaitPeriod()
			}
			res <- testing.AllocsPerRun(200, func() { tc.WaitPeriod() })
			return nil
		})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, task.Wait())
	require.Zero(t, <-res)
	require.Positive(t, task.Stats().TraceMarks)
}

// With the kernel's tracefs: the marker is in the instance's trace, and
// TraceStop turned the instance's tracing off.
func TestTraceMarkRealTracefs(t *testing.T) {
	dir := rttest.TraceInstance(t)
	rt := vanillaFIFO(t, rtapi.Options{})
	s := runUntilMarked(t, rt, rtapi.TaskSpec{Name: "traced", Period: 200 * time.Microsecond,
		TraceMark: time.Nanosecond, TraceStop: true, TraceDir: dir})
	trace, err := os.ReadFile(filepath.Join(dir, "trace"))
	require.NoError(t, err)
	require.Contains(t, string(trace), "gortapi: task traced late ")
	require.Contains(t, string(trace), " cycle "+itoa(s.TraceStopCycle))
	on, err := os.ReadFile(filepath.Join(dir, "tracing_on"))
	require.NoError(t, err)
	require.Equal(t, "0", strings.TrimSpace(string(on)))
}
