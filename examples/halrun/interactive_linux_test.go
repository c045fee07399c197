package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
)

// openPTY opens a pseudo-terminal as posix_openpt, unlockpt and ptsname
// do (as examples/halcmd's test does).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: open /dev/ptmx: %v", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { master.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0), "unlockpt")
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	require.NoError(t, err, "ptsname")
	name := fmt.Sprintf("/dev/pts/%d", n)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	require.NoError(t, err, name)
	return master, os.NewFile(uintptr(sfd), name)
}

// screen collects what a program writes to a terminal.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *screen) waitCount(t *testing.T, what string, n int) {
	t.Helper()
	rttest.WaitFor(t, fmt.Sprintf("%q %d times on the terminal", what, n), func() bool {
		return strings.Count(s.String(), what) >= n
	})
}

// halrun -I on a terminal is halcmd's interactive prompt
// (examples/internal/halprompt): "halcmd: ", TAB completion of a
// parameter's name from the HAL halrun holds, the up arrow recalling
// the last line, "halcmd+: " after a trailing backslash, a failing
// command reported and gone past, quit ending halrun with status 0.
// Before, halrun -I read plain lines with no prompt: the first
// "halcmd: " never came.
func TestInteractiveOnATerminal(t *testing.T) {
	dir := t.TempDir()
	master, slave := openPTY(t)
	cmd := exec.Command(rttest.Program(t, "."), append(append([]string{}, rtFlags...), "-shm-dir", dir,
		"-I", "-f", "testdata/servo-loop.hal")...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	slave.Close()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	scr := &screen{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			scr.mu.Lock()
			scr.buf.Write(b[:n])
			scr.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	typeIn := func(s string) {
		_, err := master.Write([]byte(s))
		require.NoError(t, err)
	}

	scr.waitCount(t, "halcmd: ", 1)
	typeIn("getp pid.0.Pg\t")
	scr.waitCount(t, "getp pid.0.Pgain ", 1) // completed, with a blank after
	typeIn("\r")
	scr.waitCount(t, "\r\n50\r\n", 1)
	scr.waitCount(t, "halcmd: ", 2)

	typeIn("\x1b[A") // up arrow: the last line again
	scr.waitCount(t, "getp pid.0.Pgain ", 2)
	typeIn("\r")
	scr.waitCount(t, "\r\n50\r\n", 2)
	scr.waitCount(t, "halcmd: ", 3)

	typeIn("setp pid.0.Pgain \\\r")
	scr.waitCount(t, "halcmd+: ", 1)
	typeIn("60\r")
	scr.waitCount(t, "halcmd: ", 4)
	typeIn("frobnicate\r")
	scr.waitCount(t, `<stdin>:5: unknown command "frobnicate"`, 1)
	scr.waitCount(t, "halcmd: ", 5)
	typeIn("getp pid.0.Pgain\r")
	scr.waitCount(t, "\r\n60\r\n", 1)
	scr.waitCount(t, "halcmd: ", 6)

	typeIn("quit\r")
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("halrun -I exited %d:\n%s", ee.ExitCode(), scr.String())
	}
	require.NoError(t, err)
	assert.Contains(t, scr.String(), "segments removed")
}
