package rttest

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// What a program writes just before it exits is on the screen once
// Wait returns: Wait reads the terminal to its end (EIO, no writer
// left), not only until the process is reaped. Before, callers ran
// cmd.Wait and read String, which missed the tail while the reader
// goroutine had not yet been scheduled (beside stress-ng --cpu 2,
// halrun's TestInteractiveOnATerminal lost "segments removed" in 12 of
// 90 runs).
func TestTerminalWaitReadsToTheEnd(t *testing.T) {
	t.Parallel()
	SkipIfEmulated(t, ForkUnderEmulator)
	for i := range Rounds(20) {
		cmd := exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt 200 ]; do echo line $i; i=$((i+1)); done; echo END")
		term := StartOnTerminal(t, cmd)
		if err := term.Wait(t); err != nil {
			t.Fatal(err)
		}
		if out := term.String(); !strings.HasSuffix(out, "line 199\r\nEND\r\n") || strings.Count(out, "\r\n") != 201 {
			t.Fatalf("round %d: %d lines, ends %q", i, strings.Count(out, "\r\n"), out[max(len(out)-40, 0):])
		}
	}
}

// eioEarly is a terminal's master side that fails with EIO in the middle
// of what the program writes, as Linux's pseudo-terminal does now and
// then, and once more at the end.
type eioEarly struct {
	mu    sync.Mutex
	parts []string // "" is an EIO
	reads int      // reads after the last part
}

func (r *eioEarly) Read(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.parts) == 0 {
		r.reads++
		return 0, syscall.EIO
	}
	p := r.parts[0]
	r.parts = r.parts[1:]
	if p == "" {
		return 0, &os.PathError{Op: "read", Path: "/dev/ptmx", Err: syscall.EIO}
	}
	return copy(b, p), nil
}

func (r *eioEarly) drained() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads > 0
}

// An EIO while the program still runs is not the terminal's end: what
// comes after it is on the screen once the program has ended. Before,
// the reader stopped at the first EIO (CI lost 140 of 201 lines once).
func TestTerminalReadsOnAfterAnEarlyEIO(t *testing.T) {
	src := &eioEarly{parts: []string{"line 0\r\n", "", "", "line 1\r\n", "", "END\r\n"}}
	term := &Terminal{src: src, read: make(chan struct{}), ended: make(chan struct{})}
	go term.readAll()
	stopped := func() bool {
		select {
		case <-term.read:
			return true
		default:
			return false
		}
	}
	WaitFor(t, "the reader to read past the early EIOs", func() bool { return src.drained() || stopped() })
	if stopped() {
		t.Fatalf("the reader stopped at an EIO before the program ended; it has %q", term.String())
	}
	term.end()
	<-term.read
	if got := term.String(); got != "line 0\r\nline 1\r\nEND\r\n" {
		t.Fatalf("screen %q", got)
	}
}
