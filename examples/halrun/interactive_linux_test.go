package main

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// halrun -I on a terminal is halcmd's interactive prompt
// (examples/internal/halprompt): "halcmd: ", TAB completion of a
// parameter's name from the HAL halrun holds, the up arrow recalling
// the last line, "halcmd+: " after a trailing backslash, a failing
// command reported and gone past, quit ending halrun with status 0.
// Before, halrun -I read plain lines with no prompt: the first
// "halcmd: " never came.
func TestInteractiveOnATerminal(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(rttest.Program(t, "."), append(append([]string{}, rtFlags...), "-shm-dir", dir,
		"-I", "-f", "testdata/servo-loop.hal")...)
	scr := rttest.StartOnTerminal(t, cmd)
	typeIn := func(s string) { scr.Type(t, s) }

	scr.WaitCount(t, "halcmd: ", 1)
	typeIn("getp pid.0.Pg\t")
	scr.WaitCount(t, "getp pid.0.Pgain ", 1) // completed, with a blank after
	typeIn("\r")
	scr.WaitCount(t, "\r\n50\r\n", 1)
	scr.WaitCount(t, "halcmd: ", 2)

	typeIn("\x1b[A") // up arrow: the last line again
	scr.WaitCount(t, "getp pid.0.Pgain ", 2)
	typeIn("\r")
	scr.WaitCount(t, "\r\n50\r\n", 2)
	scr.WaitCount(t, "halcmd: ", 3)

	typeIn("setp pid.0.Pgain \\\r")
	scr.WaitCount(t, "halcmd+: ", 1)
	typeIn("60\r")
	scr.WaitCount(t, "halcmd: ", 4)
	typeIn("frobnicate\r")
	scr.WaitCount(t, `<stdin>:5: unknown command "frobnicate"`, 1)
	scr.WaitCount(t, "halcmd: ", 5)
	typeIn("getp pid.0.Pgain\r")
	scr.WaitCount(t, "\r\n60\r\n", 1)
	scr.WaitCount(t, "halcmd: ", 6)

	typeIn("quit\r")
	err := scr.Wait(t)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("halrun -I exited %d:\n%s", ee.ExitCode(), scr.String())
	}
	require.NoError(t, err)
	assert.Contains(t, scr.String(), "segments removed")
}
