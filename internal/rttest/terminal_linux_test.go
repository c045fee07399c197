package rttest

import (
	"os/exec"
	"strings"
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
