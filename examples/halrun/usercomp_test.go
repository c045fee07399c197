package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// Issue 40, 6: the user-space verbs against a halrun in another process.

// halcmdIn runs examples/halcmd against the host of dir, instance 9.
func halcmdIn(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(rttest.Program(t, "../halcmd"), append([]string{"-shm-dir", dir, "-rtapi.instance", "9"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+rttest.ProgramDir()+":"+os.Getenv("PATH"))
	// A file, not a pipe: a program halcmd's loadusr leaves running holds
	// halcmd's output open, and reading a pipe to its end would wait for it.
	f, err := os.CreateTemp(t.TempDir(), "halcmd-out")
	require.NoError(t, err)
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	out, rerr := os.ReadFile(f.Name())
	require.NoError(t, rerr)
	return string(out), err
}

// startHost runs halrun on file until the test ends, with the programs
// (halpanel, halcmd) on PATH, and returns once the file is loaded.
func startHost(t *testing.T, dir, file string) *exec.Cmd {
	t.Helper()
	rttest.Program(t, "../halpanel")
	rttest.Program(t, "../halcmd")
	cmd := exec.Command(rttest.Program(t, "."), append(append([]string{}, rtFlags...), "-shm-dir", dir, file)...)
	cmd.Env = append(os.Environ(), "PATH="+rttest.ProgramDir()+":"+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	rd := bufio.NewReader(stdout)
	for {
		line, err := rd.ReadString('\n')
		require.NoError(t, err, line)
		if strings.Contains(line, "Ctrl-C ends") {
			break
		}
	}
	go io.Copy(io.Discard, rd)
	return cmd
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "panel.hal")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

var compRow = regexp.MustCompile(`User\s+halpanel\s+(\d+)\s+ready`)

// The example user component is loaded from a .hal file with loadusr -W,
// wired by net to a running thread's pins, and killed with SIGKILL: the
// host runs on, its thread too, halpanel's pins are gone and the signals
// stay; halrun then ends with status 0 (no thread faulted).
func TestLoadusrPanelKilled(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, `loadrt threads name1=servo period1=1000000
loadrt siggen
addf siggen.0.update servo
loadusr -W halpanel
net wave siggen.0.sine => halpanel.meter
net jog halpanel.jog => siggen.0.offset
start
`)
	host := startHost(t, dir, file)
	out, err := halcmdIn(t, dir, "show", "comp", "halpanel")
	require.NoError(t, err, out)
	m := compRow.FindStringSubmatch(out)
	require.NotNil(t, m, "halpanel is a ready user component: %s", out)
	pid, _ := strconv.Atoi(m[1])
	require.NotEqual(t, host.Process.Pid, pid)
	first, err := halcmdIn(t, dir, "getp", "halpanel.meter")
	require.NoError(t, err, first)
	require.Eventually(t, func() bool { v, _ := halcmdIn(t, dir, "getp", "halpanel.meter"); return v != first },
		time.Minute, 10*time.Millisecond, "the thread drives halpanel's IN pin")

	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool {
		out, err := halcmdIn(t, dir, "show", "pin", "halpanel")
		return err == nil && !strings.Contains(out, "halpanel.")
	}, time.Minute, 10*time.Millisecond, "the dead component's pins are gone")
	out, err = halcmdIn(t, dir, "show", "sig")
	require.NoError(t, err, out)
	assert.Contains(t, out, "wave")
	assert.Contains(t, out, "siggen.0.sine", "the signals stay with the host's pins")
	assert.Contains(t, out, "jog")
	first, err = halcmdIn(t, dir, "gets", "wave")
	require.NoError(t, err, first)
	require.Eventually(t, func() bool { v, _ := halcmdIn(t, dir, "gets", "wave"); return v != first },
		time.Minute, 10*time.Millisecond, "the thread runs on")
	require.NoError(t, host.Process.Signal(syscall.SIGINT))
	require.NoError(t, host.Wait(), "halrun ends with status 0: no thread faulted")
	assert.Empty(t, entries(t, dir))
}

// halcmd's loadusr -Wn, waitusr and unloadusr against a running halrun:
// the program joins the host halcmd names, unloadusr ends it, waitusr
// returns when it is gone; halrun's own unloadusr all at its end.
func TestHalcmdUserVerbs(t *testing.T) {
	dir := t.TempDir()
	host := startHost(t, dir, writeFile(t, "loadrt threads name1=servo period1=1000000\nloadrt siggen\nloadusr -Wn one halpanel -name one\n"))
	out, err := halcmdIn(t, dir, "loadusr", "-Wn", "two", "halpanel", "-name", "two")
	require.NoError(t, err, out)
	out, err = halcmdIn(t, dir, "show", "comp")
	require.NoError(t, err, out)
	assert.Regexp(t, `User\s+one\s+\d+\s+ready`, out)
	assert.Regexp(t, `User\s+two\s+\d+\s+ready`, out)
	out, err = halcmdIn(t, dir, "unloadusr", "two")
	require.NoError(t, err, out)
	out, err = halcmdIn(t, dir, "waitusr", "two")
	require.NoError(t, err, out)
	out, err = halcmdIn(t, dir, "show", "comp")
	require.NoError(t, err, out)
	assert.NotContains(t, out, "two")
	assert.Contains(t, out, "one")
	out, err = halcmdIn(t, dir, "waitusr", "siggen")
	assert.Error(t, err, "not a user component: %s", out)
	require.NoError(t, host.Process.Signal(syscall.SIGTERM))
	require.NoError(t, host.Wait(), "halrun ends its programs and exits 0")
	assert.Empty(t, entries(t, dir))
}

// halrun -f runs loadusr -w programs in order, with the threads a start
// before them started (LinuxCNC's tests: start, then loadusr -w
// halsampler), exits 0 at the file's end, and exits non-zero when a
// program fails, naming it.
func TestHalrunFLoadusrWait(t *testing.T) {
	dir := t.TempDir()
	halcmd := rttest.Program(t, "../halcmd")
	env := []string{fmt.Sprintf("HALCMD=%s -shm-dir %s -rtapi.instance 9", halcmd, dir)}
	file := writeFile(t, `loadrt threads name1=servo period1=1000000
loadrt siggen
addf siggen.0.update servo
start
loadusr -w true
loadusr -w sh -c "$HALCMD save"
loadusr -w sh -c "echo done"
`)
	out, code := halrun(t, dir, "", env, "-f", file)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "\nstart\n", "the threads ran while loadusr -w waited")
	assert.True(t, strings.HasSuffix(out, "done\n"), "in order, and nothing after the file: %q", out)
	assert.Empty(t, entries(t, dir))

	out, code = halrun(t, dir, "", nil, "-f", writeFile(t, "loadusr -w sh -c \"exit 4\"\nloadusr -w echo never\n"))
	assert.NotEqual(t, 0, code, out)
	assert.Contains(t, out, "panel.hal:1: loadusr: program 'sh' failed, returned 4")
	assert.NotContains(t, out, "never")
	assert.Empty(t, entries(t, dir))
}

// A user component of a user the host does not trust (uid 65534) is
// refused by a running halrun, and makes nothing.
func TestHalpanelOfUntrustedUserRefused(t *testing.T) {
	rttest.RequireRoot(t, "runs halpanel as another user")
	dir, err := os.MkdirTemp("", "gortapi-halrun-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	host := startHost(t, dir, writeFile(t, "loadrt threads name1=servo period1=1000000\n"))
	sock := filepath.Join(dir, "gortapi-9-hal.sock")
	require.NoError(t, os.Chmod(sock, 0o666))
	cmd := exec.Command(rttest.Program(t, "../halpanel"))
	cmd.Env = append(os.Environ(), "GORTAPI_HAL_SOCKET="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &rttest.Nobody, Pdeathsig: syscall.SIGKILL}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "may not command this host")
	show, err := halcmdIn(t, dir, "show", "comp")
	require.NoError(t, err, show)
	assert.NotContains(t, show, "halpanel")
	require.NoError(t, host.Process.Signal(syscall.SIGTERM))
	require.NoError(t, host.Wait())
}
