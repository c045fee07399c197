package usercomp

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// A program loadusr started lives until the host process ends, not until
// the OS thread that happened to start it ends: PR_SET_PDEATHSIG fires
// when the starting thread exits, and a HAL task's thread exits when the
// HAL thread stops, after the runtime may have run a loadusr on it.
func TestLoadusrOutlivesItsStartingThread(t *testing.T) {
	l := &Loader{DieWithParent: true, Comps: func() ([]hal.CompInfo, error) { return nil, nil }}
	t.Cleanup(func() { _ = l.Close(time.Second) })
	cmd, _, err := halfile.ParseLine("loadusr sleep 60")
	require.NoError(t, err)
	var execErr error
	rttest.OnEndingThread(func() { _, execErr = l.Exec(context.Background(), cmd) })
	require.NoError(t, execErr)
	l.mu.Lock()
	k := l.kids[0]
	l.mu.Unlock()
	select {
	case <-k.done:
		t.Fatalf("the program ended with the thread that started it: %v", k.err)
	case <-time.After(500 * time.Millisecond):
	}
}

// A program loadusr starts while real-time threads run is an ordinary
// process, SCHED_OTHER, as in LinuxCNC: not at the SCHED_FIFO 1 the
// runtime guard gives the host's own threads, where a user-space
// component would keep every ordinary process off its CPU.
func TestLoadusrStartsSchedOther(t *testing.T) {
	rttest.RequireRT(t)
	rt, err := rtapi.Open(rtapi.Options{Flavor: "rt-preempt", LockMemory: rtapi.Off}) // RuntimeGuard Auto
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close() })
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond, Priority: 50},
		func(tc *rtapi.TaskContext) error {
			for tc.WaitPeriod() {
			}
			return nil
		})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	var out bytes.Buffer
	l := &Loader{DieWithParent: true, Stdout: &out, Comps: func() ([]hal.CompInfo, error) { return nil, nil }}
	t.Cleanup(func() { _ = l.Close(time.Second) })
	run := func(line string) {
		t.Helper()
		cmd, _, err := halfile.ParseLine(line)
		require.NoError(t, err)
		_, err = l.Exec(context.Background(), cmd)
		require.NoError(t, err)
	}
	run("loadusr -w true") // makes the thread loadusr starts programs from
	rttest.WaitFor(t, "the host's threads raised to SCHED_FIFO 1", func() bool {
		tids, err := sys.Threads()
		require.NoError(t, err)
		for _, tid := range tids {
			p, prio, err := sys.Scheduler(tid)
			if err == nil && tid != task.Tid() && prio != sys.FIFOPrioMax && (p != sys.SchedFIFO || prio != 1) {
				return false
			}
		}
		return true
	})
	out.Reset()
	child := rttest.Child("policy") // this test binary in the role, run by loadusr
	l.Env = child.Env
	run("loadusr -w " + child.Path)
	require.Equal(t, "SCHED_OTHER 0", strings.TrimSpace(out.String()), "the program's policy and priority")
}
