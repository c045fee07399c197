package main

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

// Every thread of halweb runs SCHED_IDLE, from its start: here while it
// waits for a host (-wait). Before, they ran SCHED_OTHER.
func TestRunsInTheBackground(t *testing.T) {
	rttest.SkipShort(t, "builds halweb")
	halweb := rttest.Program(t, ".")
	cmd := exec.Command(halweb, "-rtapi.instance", "61", "-shm-dir", t.TempDir(), "-wait", "1h")
	start(t, cmd)
	pid := cmd.Process.Pid
	rttest.WaitFor(t, "every thread of halweb SCHED_IDLE", func() bool {
		tids, err := tasks(pid)
		if err != nil || len(tids) == 0 {
			return false
		}
		for _, tid := range tids {
			if p, _, err := sys.Scheduler(tid); err != nil || p != sys.SchedIdle {
				return false
			}
		}
		return true
	})
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
