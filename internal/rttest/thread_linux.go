package rttest

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
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

// ThreadStates describes every thread of process pid, one line each: its
// id and name, state letter, scheduling policy and real-time priority
// (as set, not as boosted), CPU, user and system time in clock ticks,
// and the kernel function it waits in. It is for the log of a test whose
// child hung; a process that is gone gives the error in words.
func ThreadStates(pid int) string {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, task := range tasks {
		stat, err := os.ReadFile(dir + "/" + task.Name() + "/stat")
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", task.Name(), err)
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		j := bytes.IndexByte(stat, '(')
		if i < 0 || j < 0 || j > i {
			fmt.Fprintf(&b, "%s: stat %q\n", task.Name(), stat)
			continue
		}
		f := strings.Fields(string(stat[i+1:])) // f[0] is field 3
		field := func(n int) string {
			if n-3 < len(f) {
				return f[n-3]
			}
			return "?"
		}
		wchan, _ := os.ReadFile(dir + "/" + task.Name() + "/wchan")
		fmt.Fprintf(&b, "tid %s %s: state %s policy %s rtprio %s cpu %s utime %s stime %s wchan %s\n",
			task.Name(), stat[j+1:i], field(3), field(41), field(40), field(39), field(14), field(15), wchan)
	}
	return b.String()
}
