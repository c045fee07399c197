package spawn

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A child Start started lives on when the thread that called Start ends
// (the kernel's parent-death signal follows the thread that forked), and
// gets the parent-death signal it was given.
func TestStartOutlivesTheCallersThread(t *testing.T) {
	c := exec.Command("sleep", "60")
	var err error
	tid := 0
	for tid == 0 {
		tids := make(chan int)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			if unix.Gettid() == unix.Getpid() {
				runtime.UnlockOSThread()
				tids <- 0
				return
			}
			err = Start(c, syscall.SIGTERM)
			tids <- unix.Gettid()
		}()
		tid = <-tids
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := c.SysProcAttr.Pdeathsig; got != syscall.SIGTERM {
		t.Fatalf("Pdeathsig %v", got)
	}
	for {
		if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid)); os.IsNotExist(err) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	t.Cleanup(func() { _ = c.Process.Kill(); <-done })
	select {
	case err := <-done:
		t.Fatalf("the child ended with the thread that started it: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
}

// A command that cannot start returns cmd.Start's error.
func TestStartError(t *testing.T) {
	if err := Start(exec.Command("/nonexistent/program"), syscall.SIGTERM); err == nil {
		t.Fatal("no error")
	}
}
