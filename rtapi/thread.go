package rtapi

import (
	"os"
	"runtime"

	"github.com/gortapi/gortapi/internal/sys"
)

// goLocked runs fn on a new goroutine locked twice to an OS thread of its
// own, never the main thread, and never unlocked: the thread dies with fn
// (HACKING.md, "Thread ownership"). A goroutine started from main usually
// runs on main's thread, so the first one holds it while it starts fn's.
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
