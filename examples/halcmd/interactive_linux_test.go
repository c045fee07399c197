package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// startOnTerminal starts halcmd with args on a new pseudo-terminal
// (rttest.StartOnTerminal) and returns the terminal.
func startOnTerminal(t *testing.T, dir string, args ...string) *rttest.Terminal {
	_, bin := binaries(t)
	cmd := exec.Command(bin, append([]string{"-shm-dir", dir, "-rtapi.instance", "7"}, args...)...)
	return rttest.StartOnTerminal(t, cmd)
}

// halcmd -kf on a terminal is LinuxCNC's interactive halcmd: the
// "halcmd: " prompt, TAB completion of a parameter's name from the
// host, the up arrow recalling the last line, a failed command that
// does not end the session (-k), ambiguous completions listed, quit.
// Before, halcmd had no -k and read no standard input.
func TestInteractiveOnATerminal(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, "../halrun/testdata/servo-loop.hal")
	scr := startOnTerminal(t, dir, "-kf")
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

	typeIn("frobnicate\r")
	scr.WaitCount(t, `<stdin>:3: unknown command "frobnicate"`, 1)
	scr.WaitCount(t, "halcmd: ", 4) // -k: the session goes on

	typeIn("show p\t") // pin and param: listed, the line kept
	scr.WaitCount(t, "pin  param", 1)
	typeIn("in pid.0.Pg\t\r") // no pin begins so: nothing completed
	scr.WaitCount(t, "Component Pins:", 1)
	scr.WaitCount(t, "halcmd: ", 5)

	typeIn("quit\r")
	err := scr.Wait(t)
	assert.Equal(t, 1, exitCode(err), "a command failed: exit 1, as LinuxCNC's\n%s", scr.String())
}

// halcmd -f reads standard input when it is no terminal, with no
// prompt: the first failure ends it (exit 1), or, with -k, is reported
// and the rest runs. "echo" echoes each later line on stderr.
func TestStandardInput(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, "../halrun/testdata/servo-loop.hal")
	_, bin := binaries(t)
	input := "getp pid.0.Pgain\nfrobnicate\nget\\\np pid.0.Pgain\necho\ngetp pid.0.Pgain\nexit\ngetp pid.0.Pgain\n"
	for _, tc := range []struct {
		flags          []string
		stdout, stderr string
	}{
		{[]string{"-f"}, "50\n", "<stdin>:2: unknown command \"frobnicate\": invalid argument\n"},
		{[]string{"-kf"}, "50\n50\nEcho on\n50\n", "<stdin>:2: unknown command \"frobnicate\": invalid argument\n(6)<echo>: getp pid.0.Pgain\n(7)<echo>: exit\n"},
		{[]string{"-k", "-f", "-Q"}, "50\n50\nEcho on\n50\n", "<stdin>:2: unknown command \"frobnicate\": invalid argument\n(6)<echo>: getp pid.0.Pgain\n(7)<echo>: exit\n"},
	} {
		cmd := exec.Command(bin, append([]string{"-shm-dir", dir, "-rtapi.instance", "7"}, tc.flags...)...)
		cmd.Stdin = strings.NewReader(input)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		err := cmd.Run()
		assert.Equal(t, 1, exitCode(err), "%v", tc.flags)
		assert.Equal(t, tc.stdout, stdout.String(), "%v", tc.flags)
		assert.Equal(t, tc.stderr, stderr.String(), "%v", tc.flags)
	}
}

// Every new verb against a running halrun in another process: list,
// ptype, stype, status, help, echo, alias, lock, save KIND and save
// KIND FILE (written by halcmd; the host writes no file a client names).
func TestNewVerbsAgainstHalrun(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, "../halrun/testdata/servo-loop.hal")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "pin", "pid.0.enable"}, "pid.0.enable \n"},
		{[]string{"list", "pin", "pid.0.Pg"}, "pid.0.Pgain \n"},
		{[]string{"list", "param", "pid.0.do-pid-calcs.tmax-"}, "pid.0.do-pid-calcs.tmax-increased \n"},
		{[]string{"ptype", "pid.0.Pgain"}, "float\n"},
		{[]string{"stype", "enable"}, "bit\n"},
		{[]string{"status", "lock"}, "HAL locking status:\n  current lock value 0 (00)\n  HAL_LOCK_NONE - nothing is locked\n"},
		{[]string{"help", "echo"}, "echo\necho the commands from stdin to stderr\nUseful for debugging scripted commands from a running program\n"},
		{[]string{"echo"}, "Echo on\n"},
		{[]string{"alias", "pin", "pid.0.Pgain", "kp"}, ""},
		{[]string{"getp", "kp"}, "50\n"},
		{[]string{"save", "alias"}, "# pin aliases\nalias pin pid.0.Pgain kp\n# param aliases\n"},
		{[]string{"lock", "tune"}, ""},
		{[]string{"setp", "kp", "51"}, ""},
		{[]string{"unlock", "all"}, ""},
		{[]string{"unalias", "pin", "kp"}, ""},
		{[]string{"getp", "pid.0.Pgain"}, "51\n"},
		{[]string{"save", "alias"}, "# pin aliases\n# param aliases\n"},
		{[]string{"unecho"}, "Echo off\n"},
	} {
		out, err := halcmd(t, dir, tc.args...)
		require.NoError(t, err, "%v: %s", tc.args, out)
		assert.Equal(t, tc.want, out, "%v", tc.args)
	}
	out, err := halcmd(t, dir, "lock")
	require.NoError(t, err, out)
	out, err = halcmd(t, dir, "net", "x", "pid.0.enable")
	require.Error(t, err)
	assert.Contains(t, out, "called while HAL")
	out, err = halcmd(t, dir, "loadusr", "true")
	require.Error(t, err)
	assert.Contains(t, out, "HAL is locked, loading of programs is not permitted")
	out, err = halcmd(t, dir, "unlock")
	require.NoError(t, err, out)

	// -v: LinuxCNC's halcmd_info lines, at "<commandline>:0".
	out, err = halcmd(t, dir, "-v", "lock", "tune")
	require.NoError(t, err, out)
	assert.Equal(t, "<commandline>:0: Locking completed", out)
	out, err = halcmd(t, dir, "-V", "unlock")
	require.NoError(t, err, out)
	assert.Equal(t, "<commandline>:0: Unlocking completed", out)

	file := filepath.Join(t.TempDir(), "threads.hal")
	out, err = halcmd(t, dir, "save", "thread", file)
	require.NoError(t, err, out)
	saved, err := os.ReadFile(file)
	require.NoError(t, err)
	want, err := halcmd(t, dir, "save", "thread")
	require.NoError(t, err, want)
	assert.Equal(t, want, string(saved))
	assert.True(t, strings.HasPrefix(want, "# realtime thread/function links\naddf "), want)

	for _, bad := range [][]string{{"list"}, {"list", "bogus"}, {"ptype", "nope"}, {"stype", strings.Repeat("s", 200)}, {"status", "bogus"}, {"alias", "pin", "nope", "x"}, {"lock", "bogus"}, {"save", "bogus"}} {
		out, err := halcmd(t, dir, bad...)
		require.Error(t, err, "%v: %s", bad, out)
	}
}
