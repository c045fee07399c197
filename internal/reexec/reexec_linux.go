package reexec

import (
	"os"
	"os/exec"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// parentEnv carries the parent's process id to the child, which ends
// itself when that process is gone (watchParent).
//
// Not PR_SET_PDEATHSIG: the kernel sends that signal when the thread that
// started the child ends, and the Go runtime ends any thread a goroutine
// left locked (a real-time task's, when the task ends), so a child
// started from such a thread was killed in the middle of its test.
const parentEnv = "GORTAPI_CHILD_PARENT"

func dieWithParent(cmd *exec.Cmd) {
	cmd.Env = append(cmd.Env, parentEnv+"="+strconv.Itoa(os.Getpid()))
}

func init() {
	if Role() == "" {
		return
	}
	ppid, err := strconv.Atoi(os.Getenv(parentEnv))
	if err != nil || ppid <= 0 {
		return
	}
	if os.Getppid() == 0 {
		// The parent is outside this process's PID namespace (a child
		// started as PID 1 of a new one): no pidfd reaches it from here,
		// so the kernel's parent-death signal, which follows the thread
		// that started this process, is the best there is.
		_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
		return
	}
	go watchParent(ppid)
}

// watchParent ends this process with status 2 once process ppid, which
// started it, has ended: it waits on a pidfd of the parent, or, where
// the kernel has none (before 5.3), checks getppid every 100 ms.
func watchParent(ppid int) {
	fd, err := unix.PidfdOpen(ppid, 0)
	if err == nil && os.Getppid() == ppid { // the pid is still our parent's
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, -1)
			if err == unix.EINTR || (err == nil && n == 0) {
				continue
			}
			break
		}
		os.Exit(2)
	}
	for os.Getppid() == ppid {
		time.Sleep(100 * time.Millisecond)
	}
	os.Exit(2)
}
