package reexec_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/reexec"
	"github.com/gortapi/gortapi/internal/rttest"
)

func init() {
	switch reexec.Role() {
	case "sleeper": // says so, then sleeps until killed
		os.Stdout.WriteString("ready\n")
		select {}
	case "middle": // starts a sleeper, prints its pid, sleeps
		c := reexec.Command("sleeper")
		c.Stderr = os.Stderr
		if err := startReady(c); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(strconv.Itoa(c.Process.Pid) + "\n")
		select {}
	}
}

// startReady starts c and waits for its first line, "ready".
func startReady(c *exec.Cmd) error {
	out, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		return &os.SyscallError{Syscall: "child said " + strconv.Quote(line), Err: err}
	}
	return nil
}

// gone says whether process pid has ended (reaped, or a zombie).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	return strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z")
}

// A child lives on when the thread that started it ends (as a real-time
// task's thread ends): before, PR_SET_PDEATHSIG killed it then, and
// hostile-writer tests' children died mid-test under -short.
func TestChildOutlivesTheThreadThatStartedIt(t *testing.T) {
	requireSelfExec(t)
	c := reexec.Command("sleeper")
	var err error
	rttest.OnEndingThread(func() { err = startReady(c) })
	if err != nil {
		t.Fatal(err)
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

// A child ends when the process that started it ends, even by SIGKILL.
func TestChildEndsWithItsParent(t *testing.T) {
	requireSelfExec(t)
	m := reexec.Command("middle")
	m.Stderr = os.Stderr
	out, err := m.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(line)
	}
	if err := m.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = m.Wait()
	for !gone(pid) {
		time.Sleep(10 * time.Millisecond)
	}
}

// requireSelfExec skips t where this binary cannot run itself again:
// under a user-mode emulator, without trying (rttest.ForkUnderEmulator), or
// where the kernel cannot exec it.
func requireSelfExec(t *testing.T) {
	t.Helper()
	rttest.SkipIfEmulated(t, rttest.ForkUnderEmulator)
	if err := reexec.Command("echo").Run(); err != nil {
		t.Skipf("this test binary cannot be executed again here: %v", err)
	}
}
