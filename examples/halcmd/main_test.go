package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// These tests run halrun and halcmd as real processes, as a user would in
// two terminals, against a temporary segment directory.

// binaries builds halrun and halcmd once.
func binaries(t *testing.T) (halrun, halcmd string) {
	t.Helper()
	return rttest.Program(t, "../halrun"), rttest.Program(t, ".")
}

// TestMain doubles as the impostor of TestImpostorAtOldSocketPath.
func TestMain(m *testing.M) {
	if rttest.ChildRole() == "impostor" {
		os.Exit(impostor(os.Args[1]))
	}
	os.Exit(rttest.Main(m))
}

var rtFlags = []string{"-rtapi.flavor", "posix", "-rtapi.lock-memory=off", "-rtapi.instance", "7"}

// host starts halrun on file and waits for it to say it is loaded.
func host(t *testing.T, dir, file string, flags ...string) *exec.Cmd {
	halrun, _ := binaries(t)
	args := append(append(slices.Clone(rtFlags), "-shm-dir", dir), flags...)
	cmd := exec.Command(halrun, append(args, file)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "loaded on flavor") {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd
		}
	}
	t.Fatalf("halrun ended before loading: %v", cmd.Wait())
	return nil
}

func halcmd(t *testing.T, dir string, args ...string) (string, error) {
	_, bin := binaries(t)
	out, err := exec.Command(bin, append([]string{"-shm-dir", dir, "-rtapi.instance", "7"}, args...)...).CombinedOutput()
	return string(out), err
}

// Issue 38, 2: every halcmd verb goes through the host's socket, setp,
// sets, getp and show pin as much as net; halcmd needs no segment key, so
// a host whose data segment has another key (halhost's) is reached as is.
// Before, setp, getp and show pin attached the data segment under
// halcmd's -data-key and failed here with "no HAL host of instance 7".
func TestEveryVerbGoesThroughTheSocket(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, "../halrun/testdata/servo-loop.hal", "-data-key", "0x4a4a4a4a")
	for _, args := range [][]string{{"setp", "pid.0.Pgain", "61"}, {"sets", "enable", "FALSE"}} {
		out, err := halcmd(t, dir, args...)
		require.NoError(t, err, out)
	}
	out, err := halcmd(t, dir, "getp", "pid.0.Pgain")
	require.NoError(t, err, out)
	assert.Equal(t, "61\n", out)
	out, err = halcmd(t, dir, "show", "pin", "pid.0.enable")
	require.NoError(t, err, out)
	assert.Contains(t, out, "pid.0.enable <== enable\n")
	assert.Contains(t, out, "FALSE")
	out, err = halcmd(t, dir, "setp", "pid.0.output", "1")
	require.Error(t, err)
	assert.Contains(t, out, `halcmd:1: hal: setp: pin "pid.0.output" is an OUT pin, not writable`)
}

func TestHalcmdAgainstHalrun(t *testing.T) {
	dir := t.TempDir()
	h := host(t, dir, "../halrun/testdata/servo-loop.hal")

	out, err := halcmd(t, dir, "getp", "pid.0.Pgain")
	require.NoError(t, err, out)
	assert.Equal(t, "50\n", out)
	out, err = halcmd(t, dir, "setp", "pid.0.Pgain", "60")
	require.NoError(t, err, out)
	out, err = halcmd(t, dir, "getp", "pid.0.Pgain")
	require.NoError(t, err, out)
	assert.Equal(t, "60\n", out, "a setp from another process")

	out, err = halcmd(t, dir, "show", "pin", "sim_motor.0.c")
	require.NoError(t, err, out)
	assert.True(t, strings.HasPrefix(out, "Component Pins:\nOwner   Type  Dir                 Value  Name\n"), out)
	assert.Contains(t, out, "  float IN    ")
	assert.Contains(t, out, "sim_motor.0.command <== vel-cmd\n")

	out, err = halcmd(t, dir, "net", "vel-cmd", "pid.0.feedback")
	require.Error(t, err)
	assert.Contains(t, out, `halcmd:1: hal: net: pin "pid.0.feedback" is linked to signal "pos-fb"`)
	assert.Equal(t, 1, exitCode(err))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "change.hal"), []byte(`# from another shell
unlinkp pid.0.feedback
setp pid.0.feedback 1.5
newsig spare float
sets spare 2.5
`), 0o600))
	out, err = halcmd(t, dir, "-f", filepath.Join(dir, "change.hal"))
	require.NoError(t, err, out)
	out, err = halcmd(t, dir, "show", "sig", "spare")
	require.NoError(t, err, out)
	assert.Equal(t, "Signals:\nType                  Value  Name     (linked to)\nfloat                   2.5  spare\n\n", out)
	out, err = halcmd(t, dir, "getp", "pid.0.feedback")
	require.NoError(t, err, out)
	assert.Equal(t, "1.5\n", out)

	out, err = halcmd(t, dir, "save")
	require.NoError(t, err, out)
	assert.Contains(t, out, "loadrt pid count=1\n")
	assert.Contains(t, out, "setp pid.0.Pgain 60\n")
	assert.Contains(t, out, "newsig spare float\n")
	out, err = halcmd(t, dir, "show", "thread")
	require.NoError(t, err, out)
	assert.Contains(t, out, " servo (")
	assert.Contains(t, out, "pid.0.do-pid-calcs")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.hal"), []byte("setp pid.0.Pgain 1\nsetp pid.0.output 2\n"), 0o600))
	out, err = halcmd(t, dir, "-f", filepath.Join(dir, "bad.hal"))
	require.Error(t, err)
	assert.Contains(t, out, `bad.hal:2: hal: setp: pin "pid.0.output" is an OUT pin, not writable`)

	require.NoError(t, h.Process.Signal(syscall.SIGINT))
	require.NoError(t, h.Wait(), "Ctrl-C ends halrun with status 0")
	assert.Empty(t, entries(t, dir, "gortapi-"), "no segment or socket left")
}

// addf and delf from another process change what a running thread runs.
// scale.0 (out = 2*3+1 = 7 once it runs) is not in the thread at first;
// scale.1 is, as a witness that the thread keeps cycling. Nothing is
// asserted on time: a value that must not change is checked only after
// the witness has shown a full cycle that began after the change.
func TestHalcmdAddfDelfOnRunningThread(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "addf.hal")
	require.NoError(t, os.WriteFile(file, []byte(`loadrt threads name1=servo period1=1000000
loadrt scale count=2
addf scale.1 servo
setp scale.1.gain 1
setp scale.0.in 2
setp scale.0.gain 3
setp scale.0.offset 1
start
`), 0o600))
	h := host(t, dir, file)
	getp := func(pin string) string {
		t.Helper()
		out, err := halcmd(t, dir, "getp", pin)
		require.NoError(t, err, out)
		return strings.TrimSpace(out)
	}
	witness := 0
	// twoCycles returns once the thread has run scale.1 in two cycles
	// that began after the call.
	twoCycles := func() {
		t.Helper()
		for range 2 {
			witness++
			want := strconv.Itoa(witness)
			out, err := halcmd(t, dir, "setp", "scale.1.in", want)
			require.NoError(t, err, out)
			rttest.WaitFor(t, "scale.1.out = "+want, func() bool { return getp("scale.1.out") == want })
		}
	}
	twoCycles()
	assert.Equal(t, "0", getp("scale.0.out"), "scale.0 is in no thread yet")

	out, err := halcmd(t, dir, "addf", "scale.0", "servo")
	require.NoError(t, err, out)
	rttest.WaitFor(t, "scale.0 to run", func() bool { return getp("scale.0.out") == "7" })
	out, err = halcmd(t, dir, "show", "thread")
	require.NoError(t, err, out)
	assert.Contains(t, out, " scale.0\n")

	out, err = halcmd(t, dir, "delf", "scale.0", "servo")
	require.NoError(t, err, out)
	twoCycles() // a cycle begun before the delf has ended
	out, err = halcmd(t, dir, "setp", "scale.0.in", "5")
	require.NoError(t, err, out)
	twoCycles()
	assert.Equal(t, "7", getp("scale.0.out"), "scale.0 no longer runs: out is not 5*3+1")
	out, err = halcmd(t, dir, "show", "thread")
	require.NoError(t, err, out)
	assert.NotContains(t, out, " scale.0\n")
	assert.Contains(t, out, " scale.1\n")

	out, err = halcmd(t, dir, "delf", "scale.0", "servo")
	require.Error(t, err, "a second delf: scale.0 is in no thread")
	assert.Contains(t, out, "scale.0")

	require.NoError(t, h.Process.Signal(syscall.SIGINT))
	require.NoError(t, h.Wait(), "Ctrl-C ends halrun with status 0")
	assert.Empty(t, entries(t, dir, "gortapi-"), "no segment or socket left")
}

// A bad file starts nothing and leaves no segment; the error says where.
func TestHalrunBadFile(t *testing.T) {
	halrun, _ := binaries(t)
	dir := t.TempDir()
	for src, want := range map[string]string{
		"loadrt threads name1=servo period1=1000000\nloadrt pid\nnet x pid.0.output pid.1.enable\nstart\n": `bad.hal:3: hal: net: type mismatch: pin "pid.1.enable" is bit`,
		"loadrt pid\nsetp pid.0.Pgain\n": `bad.hal:2: setp takes 2 arguments, not 1`,
	} {
		file := filepath.Join(dir, "bad.hal")
		require.NoError(t, os.WriteFile(file, []byte(src), 0o600))
		out, err := exec.Command(halrun, append(rtFlags, "-shm-dir", dir, file)...).CombinedOutput()
		require.Error(t, err)
		assert.Equal(t, 1, exitCode(err))
		assert.Contains(t, string(out), want)
		assert.Empty(t, entries(t, dir, "gortapi-"))
	}
	out, err := halcmd(t, dir, "show", "pin")
	require.Error(t, err)
	assert.Contains(t, out, "no HAL host of instance 7 (is halrun running?)")
}

func entries(t *testing.T, dir, prefix string) []string {
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, d := range des {
		if strings.HasPrefix(d.Name(), prefix) {
			out = append(out, d.Name())
		}
	}
	return out
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// halcmd -f reads a file as halrun does: [SECTION]KEY from the INI file
// -i names (or $INI_FILE_NAME), $VAR from the environment, and source.
// Before, "[TUNE]P" reached the host as a word ("not a number").
func TestHalcmdFileWithINIAndSource(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, "../halrun/testdata/servo-loop.hal")
	ini := filepath.Join(dir, "mill.ini")
	require.NoError(t, os.WriteFile(ini, []byte("[TUNE]\nP = 71\nI = 0.5\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gains.hal"), []byte("setp pid.0.Igain [TUNE]I\n"), 0o600))
	file := filepath.Join(dir, "tune.hal")
	require.NoError(t, os.WriteFile(file, []byte("setp pid.0.Pgain [TUNE]P\nsource gains.hal\nsetp pid.0.Dgain $GORTAPI_TEST_D\n"), 0o600))

	_, bin := binaries(t)
	run := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"-shm-dir", dir, "-rtapi.instance", "7"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run([]string{"GORTAPI_TEST_D=0.25"}, "-i", ini, "-f", file)
	require.NoError(t, err, out)
	for pin, want := range map[string]string{"pid.0.Pgain": "71", "pid.0.Igain": "0.5", "pid.0.Dgain": "0.25"} {
		out, err := halcmd(t, dir, "getp", pin)
		require.NoError(t, err, out)
		assert.Equal(t, want+"\n", out, pin)
	}

	require.NoError(t, os.WriteFile(ini, []byte("[TUNE]\nP = 72\nI = 0.5\n"), 0o600))
	out, err = run([]string{"GORTAPI_TEST_D=0.25", "INI_FILE_NAME=" + ini}, "-f", file)
	require.NoError(t, err, out)
	out, err = halcmd(t, dir, "getp", "pid.0.Pgain")
	require.NoError(t, err, out)
	assert.Equal(t, "72\n", out, "the INI file $INI_FILE_NAME names")

	out, err = run(nil, "-f", file)
	require.Error(t, err, "no INI file: [TUNE]P is an error")
	assert.Contains(t, out, "tune.hal:1")
	assert.Contains(t, out, "TUNE")
}
