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
// in a task body cannot hand it back to Go's pool. HACKING.md
// ("Thread ownership") says why the main thread is avoided. A goroutine
// started from main usually runs next on main's thread, so the first one
// holds that thread locked while it starts fn's goroutine elsewhere.
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
