package spawn

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/rttest"
)

// A child Start started lives on when the thread that called Start ends
// (the kernel's parent-death signal follows the thread that forked), and
// gets the parent-death signal it was given.
func TestStartOutlivesTheCallersThread(t *testing.T) {
	rttest.SkipIfEmulated(t, rttest.ForkUnderEmulator)
	c := exec.Command("sleep", "60")
	var err error
	rttest.OnEndingThread(func() { err = Start(c, syscall.SIGTERM) })
	if err != nil {
		t.Fatal(err)
	}
	if got := c.SysProcAttr.Pdeathsig; got != syscall.SIGTERM {
		t.Fatalf("Pdeathsig %v", got)
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
	rttest.SkipIfEmulated(t, rttest.ForkUnderEmulator)
	if err := Start(exec.Command("/nonexistent/program"), syscall.SIGTERM); err == nil {
		t.Fatal("no error")
	}
}
