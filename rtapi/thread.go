package rtapi

import (
	"os"
	"runtime"

	"github.com/gortapi/gortapi/internal/sys"
)

// goLocked runs fn on a new goroutine locked to an OS thread of its own,
// never the process's main thread, and never unlocks it: when fn returns
// (or calls runtime.Goexit) the runtime destroys the thread, whatever fn
// left on it (SCHED_FIFO, an affinity, blocked signals). The thread is
// locked twice (the locks nest), so that one stray runtime.UnlockOSThread
// in a task body cannot hand it back to Go's pool.
//
// The main thread is avoided for two reasons. The kernel prefers it for
// process-directed signals (SIGINT, SIGWINCH …), which would interrupt a
// task there. And Go cannot destroy it: a locked goroutine exiting on it
// leaves it parked forever, still real-time. A goroutine started and
// waited for from main usually runs next on main's thread; that one hands
// fn to another goroutine, which cannot be scheduled on the main thread
// while the first holds it locked, and then lets the main thread go.
func goLocked(fn func()) {
	go func() {
		runtime.LockOSThread()
		if sys.Gettid() != os.Getpid() {
			runtime.LockOSThread()
			fn()
			return
		}
		moved := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			runtime.LockOSThread()
			close(moved)
			fn()
		}()
		<-moved
		runtime.UnlockOSThread() // nothing was changed on the main thread
	}()
}
