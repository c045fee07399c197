package main

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

// Once attached, every thread of halweb runs SCHED_IDLE; with -idle=false
// none does. Before, they ran SCHED_OTHER.
func TestRunsInTheBackground(t *testing.T) {
	rttest.SkipShort(t, "builds halweb")
	halweb := rttest.Program(t, ".")
	host := newSimHost(t)
	for _, idle := range []bool{true, false} {
		cmd := exec.Command(halweb, "-rtapi.instance", strconv.Itoa(host.rt.Instance()), "-shm-dir", host.dir,
			"-http", "127.0.0.1:0", "-idle="+strconv.FormatBool(idle))
		waitLine(t, cmd, "serving")
		tids, err := tasks(cmd.Process.Pid)
		require.NoError(t, err)
		require.NotEmpty(t, tids)
		for _, tid := range tids {
			p, _, err := sys.Scheduler(tid)
			if err != nil {
				continue // exited meanwhile
			}
			assert.Equal(t, idle, p == sys.SchedIdle, "-idle=%v: thread %d runs %v", idle, tid, p)
		}
		require.NoError(t, cmd.Process.Signal(os.Interrupt))
		require.NoError(t, cmd.Wait())
	}
}

// tasks lists the thread ids of process pid.
func tasks(pid int) ([]int, error) {
	d, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, e := range d {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
