package rttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Terminal is a pseudo-terminal a program under test runs on: what the
// program writes collects in a screen; Type writes to its input.
type Terminal struct {
	master *os.File
	src    io.Reader // master, as readAll reads it
	cmd    *exec.Cmd
	read   chan struct{} // closed when the terminal has no more to read
	ended  chan struct{} // closed once cmd has been waited for (or killed)
	endOne sync.Once
	mu     sync.Mutex
	buf    bytes.Buffer
}

// StartOnTerminal starts cmd on a new pseudo-terminal, in its own session
// with the terminal as its controlling one, as a shell would (stdin,
// stdout and stderr the terminal; it dies with the test). It skips t
// where there is no /dev/ptmx; cmd is killed when t ends. Wait for cmd
// through Terminal.Wait, which also reads what it wrote last.
func StartOnTerminal(t testing.TB, cmd *exec.Cmd) *Terminal {
	t.Helper()
	master, slave := openPTY(t)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	term := &Terminal{master: master, src: master, cmd: cmd, read: make(chan struct{}), ended: make(chan struct{})}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		term.end()
	})
	go term.readAll()
	return term
}

// readAll collects what the program writes until the terminal's end: a
// read that fails once the program has ended. A read can fail with EIO
// while the program still writes (the pseudo-terminal's "other side
// closed" seen early: 1 round in about 10,000 beside stress-ng --cpu 2
// on Linux 6.18, the rest of the output readable afterwards), so an EIO
// before the end only makes it read on until the program has ended.
func (term *Terminal) readAll() {
	defer close(term.read)
	b := make([]byte, 4096)
	ended := false
	for {
		n, err := term.src.Read(b)
		term.mu.Lock()
		term.buf.Write(b[:n])
		term.mu.Unlock()
		switch {
		case err == nil:
		case ended || !errors.Is(err, syscall.EIO):
			return
		default: // read on, every millisecond, so that a program that
			// writes much does not block on a full terminal
			select {
			case <-term.ended:
				ended = true
			case <-time.After(time.Millisecond):
			}
		}
	}
}

// end tells readAll that the program has ended.
func (term *Terminal) end() { term.endOne.Do(func() { close(term.ended) }) }

// openPTY opens a pseudo-terminal as posix_openpt, unlockpt and ptsname
// do: the master /dev/ptmx, unlocked (TIOCSPTLCK), and its slave
// /dev/pts/N (TIOCGPTN).
func openPTY(t testing.TB) (master, slave *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: open /dev/ptmx: %v", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	name := fmt.Sprintf("/dev/pts/%d", n)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return master, os.NewFile(uintptr(sfd), name)
}

// Wait waits for the program to end and for the terminal to deliver the
// last of what it wrote (the read that fails with EIO once no process
// holds the terminal open), and returns cmd.Wait's error. It fails t if
// that end does not come within WaitTimeout (a child left holding the
// terminal).
func (term *Terminal) Wait(t testing.TB) error {
	t.Helper()
	err := term.cmd.Wait()
	term.end()
	select {
	case <-term.read:
	case <-time.After(WaitTimeout):
		t.Fatalf("waited %v for the terminal's end after the program ended; a child still holds it", WaitTimeout)
	}
	return err
}

// Type writes s to the program's input, as keys typed.
func (term *Terminal) Type(t testing.TB, s string) {
	t.Helper()
	if _, err := term.master.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// String returns everything the program wrote so far.
func (term *Terminal) String() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.buf.String()
}

// WaitCount waits until what has appeared at least n times.
func (term *Terminal) WaitCount(t testing.TB, what string, n int) {
	t.Helper()
	WaitFor(t, fmt.Sprintf("%q %d times on the terminal", what, n), func() bool {
		return strings.Count(term.String(), what) >= n
	})
}
