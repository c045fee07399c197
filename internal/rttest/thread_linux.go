package rttest

import (
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// OnEndingThread runs f on an OS thread that ends when f returns, as a
// real-time task's thread ends when the task does (not the main thread,
// which the runtime keeps), and returns once the thread is gone.
func OnEndingThread(f func()) {
	for {
		tids := make(chan int)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			tid := unix.Gettid()
			if tid == unix.Getpid() {
				runtime.UnlockOSThread()
				tids <- 0
				return
			}
			f()
			tids <- tid
		}()
		if tid := <-tids; tid != 0 {
			for {
				if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid)); os.IsNotExist(err) {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
}
