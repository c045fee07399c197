package main

import (
	"bytes"
	"errors"
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

// These tests run halrun as a real process, as a user would.

func TestMain(m *testing.M) { os.Exit(rttest.Main(m)) }

var rtFlags = []string{"-rtapi.flavor", "posix", "-rtapi.lock-memory=off", "-rtapi.instance", "9"}

// halrun runs halrun with stdin and env added to the test's environment,
// and returns its output and exit status.
func halrun(t *testing.T, dir, stdin string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(rttest.Program(t, "."), append(append(append([]string{}, rtFlags...), "-shm-dir", dir), args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), 0
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// The symptom of gortapi issue #40: "loadrt threads
// period1=[EMCMOT]BASE_PERIOD" was refused as "not an integer", with
// INI_FILE_NAME set as linuxcnc sets it. Now the period, the gains and
// a sourced file's limit come from the INI file.
func TestINIPeriod(t *testing.T) {
	dir := t.TempDir()
	out, code := halrun(t, dir, "", []string{"INI_FILE_NAME=testdata/mill/mill.ini"},
		"-f", "testdata/mill/hal/mill.hal")
	assert.Equal(t, 0, code, out)
	assert.NotContains(t, out, "not an integer")
	assert.Contains(t, out, "50\n200\n", "getp of values from the INI file, one through source")
	assert.Empty(t, entries(t, dir), "-f unloads everything at the file's end")
}

// -i names the INI file and wins over INI_FILE_NAME.
func TestINIFlag(t *testing.T) {
	dir := t.TempDir()
	out, code := halrun(t, dir, "", []string{"INI_FILE_NAME=/nonexistent.ini"},
		"-i", "testdata/mill/mill.ini", "-f", "testdata/mill/hal/mill.hal")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "50\n200\n")
}

// An unknown key, or no INI file, is an error at FILE:LINE naming it,
// and nothing is left behind.
func TestINIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.hal")
	require.NoError(t, os.WriteFile(bad, []byte("loadrt pid\nsetp pid.0.Pgain [JOINT_0]NOPE\n"), 0o600))
	out, code := halrun(t, dir, "", nil, "-i", "testdata/mill/mill.ini", "-f", bad)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, out, bad+":2: INI variable [JOINT_0]NOPE not found")

	out, code = halrun(t, dir, "", []string{"INI_FILE_NAME="}, "-f", "testdata/mill/hal/mill.hal")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, out, "testdata/mill/hal/mill.hal:2: INI variable [EMCMOT]BASE_PERIOD: no INI file")

	out, code = halrun(t, dir, "", nil, "-i", filepath.Join(dir, "none.ini"), "-f", "testdata/mill/hal/mill.hal")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, out, "none.ini")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.ini"), []byte("[EMCMOT]\nBASE_PERIOD\n"), 0o600))
	out, code = halrun(t, dir, "", nil, "-i", filepath.Join(dir, "broken.ini"), "-f", "testdata/mill/hal/mill.hal")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, out, "broken.ini:2: \"BASE_PERIOD\": no '=' after the key")
	assert.Empty(t, entries(t, dir)[2:], "only the files the test wrote: %v", entries(t, dir))
}

// -f FILE: a failing command is an exit status other than 0.
func TestFileModeExitStatus(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.hal")
	require.NoError(t, os.WriteFile(bad, []byte("loadrt pid\nsetp pid.0.output 1\n"), 0o600))
	out, code := halrun(t, dir, "", nil, "-f", bad)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, bad+":2: hal: setp")
	assert.Equal(t, []string{"bad.hal"}, entries(t, dir))

	// With -I, a failing file ends halrun too: nothing stays loaded.
	out, code = halrun(t, dir, "getp pid.0.Pgain\n", nil, "-I", "-f", bad)
	assert.Equal(t, 1, code, out)
	assert.NotContains(t, out, "standard input")
	assert.Equal(t, []string{"bad.hal"}, entries(t, dir))
}

// -I reads commands from stdin after the file, keeps going past a
// failing one, and unloads everything at the end of its input; the
// exit status is the file's, as LinuxCNC's halrun -I.
func TestInteractiveAfterFile(t *testing.T) {
	dir := t.TempDir()
	stdin := "getp pid.0.Pgain\nsetp pid.0.Pgain [JOINT_0]P\nsetp pid.0.nope 1\n" +
		"setp pid.0.Igain \\\n 2.5\ngetp pid.0.Igain\nshow thread servo\nquit\ngetp pid.0.Pgain\n"
	out, code := halrun(t, dir, stdin, nil, "-i", "testdata/mill/mill.ini", "-I", "-f", "testdata/mill/hal/mill.hal")
	assert.Equal(t, 0, code, out)
	file, stdinOut, ok := strings.Cut(out, "its end or quit ends\n")
	require.True(t, ok, out)
	assert.Equal(t, "50\n200\n", file[:strings.Index(file, "halrun:")], "the file's getp")
	assert.True(t, strings.HasPrefix(stdinOut, "50\n"), "stdin's getp: %q", stdinOut)
	assert.Contains(t, stdinOut, `halrun: <stdin>:3: hal: setp: pin or parameter "pid.0.nope" does not exist`)
	assert.Contains(t, stdinOut, "\n2.5\n", "a continued line")
	assert.Contains(t, stdinOut, "pid.0.do-pid-calcs", "show, after a failing command")
	assert.Equal(t, 1, strings.Count(stdinOut, "50\n"), "nothing after quit")
	assert.Empty(t, entries(t, dir))
}

// halrun FILE still runs until Ctrl-C (LinuxCNC's runs the file and
// exits, as -f does here).
func TestFileRunsUntilInterrupt(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(rttest.Program(t, "."), append(append([]string{}, rtFlags...), "-shm-dir", dir,
		"-i", "testdata/mill/mill.ini", "testdata/mill/hal/mill.hal")...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte("Ctrl-C ends")) {
		n, err := stdout.Read(buf)
		require.NoError(t, err, string(got))
		got = append(got, buf[:n]...)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	go func() {
		for {
			if _, err := stdout.Read(buf); err != nil {
				return
			}
		}
	}()
	require.NoError(t, cmd.Wait())
	assert.Empty(t, entries(t, dir))
}

// -U removes what a dead host left (its segments and socket) and refuses
// while a live host serves the instance.
func TestCleanupStale(t *testing.T) { testCleanupStale(t, rtFlags, nil) }

// -U cleans up the instance $RTAPI_INSTANCE names, as every rtapi
// program reads it; it used to clean up instance 0 whatever the variable.
func TestCleanupFollowsRTAPIInstance(t *testing.T) {
	testCleanupStale(t, rtFlags[:3], []string{"RTAPI_INSTANCE=7"}) // no -rtapi.instance
}

// testCleanupStale runs TestCleanupStale's steps, every halrun with flags
// and env.
func testCleanupStale(t *testing.T, flags, env []string) {
	dir := t.TempDir()
	runU := func() (string, int) {
		cmd := exec.Command(rttest.Program(t, "."), append(append([]string{}, flags...), "-shm-dir", dir, "-U")...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		require.NoError(t, err)
		return string(out), 0
	}
	cmd := exec.Command(rttest.Program(t, "."), append(append([]string{}, flags...), "-shm-dir", dir,
		"-i", "testdata/mill/mill.ini", "testdata/mill/hal/mill.hal")...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte("Ctrl-C ends")) {
		n, err := stdout.Read(buf)
		require.NoError(t, err, string(got))
		got = append(got, buf[:n]...)
	}
	left := entries(t, dir)
	require.NotEmpty(t, left)

	out, code := runU()
	assert.NotEqual(t, 0, code, out)
	assert.Contains(t, out, "a live host")
	assert.Equal(t, left, entries(t, dir), "a live host's files are kept")

	require.NoError(t, cmd.Process.Kill()) // dies without cleaning up
	cmd.Wait()
	assert.Equal(t, left, entries(t, dir), "a killed host leaves its files")
	out, code = runU()
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "removed")
	assert.Empty(t, entries(t, dir))
	out, code = runU()
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "nothing")
}

// With no file halrun reads standard input, as LinuxCNC's halrun with
// no file; source there is relative to the working directory.
func TestInteractiveWithoutFile(t *testing.T) {
	dir := t.TempDir()
	stdin := "loadrt pid\nsource testdata/mill/hal/joint-limits.hal\ngetp pid.0.maxoutput\nsetp pid.0.Pgain $GAIN\ngetp pid.0.Pgain\n"
	out, code := halrun(t, dir, stdin, []string{"GAIN=7"}, "-i", "testdata/mill/mill.ini")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "ends\n200\n7\n")
	assert.Empty(t, entries(t, dir))
}

func TestFlagUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-f", "a.hal", "b.hal"},
		{"a.hal", "b.hal"},
		{"-U", "a.hal"},
		{"-U", "-I"},
		{"-U", "-data-key", "0"},
		{"-U", "-data-key", "1", "-stats-key", "1"},
	} {
		out, code := halrun(t, dir, "", nil, args...)
		assert.Equal(t, 2, code, "%v: %s", args, out)
	}
}

// LinuxCNC's test.hal files begin with setexact_for_test_suite_only and
// some set "log rt LEVEL"; halrun -f refused both as unknown commands
// (issue 40 part 4). They are accepted and do nothing; line numbers of
// later errors stay right.
func TestLinuxCNCKernelLinesAccepted(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "test.hal")
	require.NoError(t, os.WriteFile(file, []byte("setexact_for_test_suite_only\nlog rt 1\nlog user 2\nloadrt threads name1=fast period1=1000000\n"), 0o644))
	out, code := halrun(t, dir, "", nil, "-f", file)
	require.Equal(t, 0, code, out)

	require.NoError(t, os.WriteFile(file, []byte("setexact_for_test_suite_only\nlog rt 1\nbogus\n"), 0o644))
	out, code = halrun(t, dir, "", nil, "-f", file)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "test.hal:3:")
}

// A file that starts the threads and then locks the HAL runs in order,
// as LinuxCNC's halcmd runs it: the start is applied before the lock,
// not held back to the file's end where the lock would refuse it.
func TestFileStartThenLock(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "lock.hal")
	require.NoError(t, os.WriteFile(f, []byte("loadrt threads name1=servo period1=1000000\nstart\nlock all\n"), 0o600))
	out, code := halrun(t, dir, "show thread servo\nstop\n", nil, "-I", "-f", f)
	assert.Equal(t, 0, code, out)
	assert.NotContains(t, out, "lock.hal:2", "start is not refused")
	assert.Contains(t, out, "stop_threads called while HAL is locked", "the lock holds")
}
