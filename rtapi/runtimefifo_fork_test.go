package rtapi_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
)

// childPolicy is the "policy" role: it prints its thread's policy and
// priority.
func childPolicy() int {
	p, prio, err := sys.Scheduler(0)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Printf("%v %d\n", p, prio)
	return 0
}

// A process the program starts while its runtime threads run at
// SCHED_FIFO 1 (the runtime guard's second step) starts SCHED_OTHER:
// the raise is the program's, not its children's. A child at FIFO 1 (a
// scraper, a loadusr component) would hog a CPU above every ordinary
// process, outside the valve, and keep the program's own FIFO 1 threads
// off that CPU until its runtime stalls.
func TestRuntimeFIFONotInherited(t *testing.T) {
	rttest.RequireRT(t)
	rttest.RequireSelfExec(t)
	rt := open(t, rtapi.Options{Flavor: "rt-preempt", LockMemory: rtapi.Off}) // RuntimeGuard Auto
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond, Priority: 50}, loop)
	require.NoError(t, err)
	require.NoError(t, task.Start())

	runtime.LockOSThread() // the child is forked from this thread
	defer runtime.UnlockOSThread()
	rttest.WaitFor(t, "this thread raised to SCHED_FIFO 1", func() bool {
		p, prio, err := sys.Scheduler(0)
		return err == nil && p == sys.SchedFIFO && prio == 1
	})
	out, err := rttest.Child("policy").Output()
	require.NoError(t, err)
	require.Equal(t, "SCHED_OTHER 0", strings.TrimSpace(string(out)), "the child's policy")

	// The threads the runtime makes from a raised thread are raised too.
	tids := make(chan int)
	release := make(chan struct{})
	defer close(release)
	go func() {
		runtime.LockOSThread()
		tids <- sys.Gettid()
		<-release
	}()
	tid := <-tids
	rttest.WaitFor(t, "a thread made since at SCHED_FIFO 1", func() bool {
		p, prio, err := sys.Scheduler(tid)
		return err == nil && p == sys.SchedFIFO && prio == 1
	})
}
