package main

import (
	"bufio"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// Issue 40, "Done means": a configuration in the shape of LinuxCNC's
// configs/sim (testdata/configs/sim: an INI file with [EMCMOT], [AXIS_X],
// [JOINT_0] and [HAL] sections, .hal files that take [SECTION]KEY, source
// each other, loadusr -W a user component and load threads, siggen,
// limit3, ddt, pid and stepgen in place of the motion controller) runs
// under halrun -i INI FILE. halcmd, from another process, finds the INI
// values on the pins, the user component ready, and the machine moving
// only once it is switched on: to [AXIS_X]MAX_LIMIT, not to the command
// beyond it.
func TestSimConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds halrun, halcmd and halpanel and runs a host until the joint settles")
	}
	dir := t.TempDir()
	host := startSimHost(t, dir, "testdata/configs/sim/sim.ini", "testdata/configs/sim/sim.hal")
	getp := func(name string) float64 {
		t.Helper()
		out, err := halcmdIn(t, dir, "getp", name)
		require.NoError(t, err, out)
		v, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
		require.NoError(t, err, "getp %s: %q", name, out)
		return v
	}

	// The INI file's values, through core_sim.hal and sim_stepper.hal.
	for pin, want := range map[string]float64{
		"siggen.0.offset": 15, "limit3.0.min": -10, "limit3.0.max": 10, "limit3.0.maxv": 40, "limit3.0.maxa": 400,
		"pid.0.Pgain": 50, "pid.0.FF1": 1, "stepgen.0.position-scale": 100, "stepgen.0.maxvel": 50,
	} {
		assert.Equal(t, want, getp(pin), pin)
	}
	out, err := halcmdIn(t, dir, "show", "thread")
	require.NoError(t, err, out)
	// the period as ns (LinuxCNC's show thread) or as a duration
	assert.Regexp(t, `(?m)^.*(\b50000\b|\b50µs).*base-thread|base-thread.*(\b50000\b|\b50µs)`, out, "[EMCMOT]BASE_PERIOD")
	assert.Regexp(t, `(?m)^.*(\b1000000\b|\b1ms).*servo-thread|servo-thread.*(\b1000000\b|\b1ms)`, out, "[EMCMOT]SERVO_PERIOD")
	out, err = halcmdIn(t, dir, "show", "comp", "halpanel")
	require.NoError(t, err, out)
	assert.Regexp(t, compRow, out, "panel.hal's loadusr -W: a ready user component")

	// Machine off: the command is clamped to MAX_LIMIT, the joint stays.
	rttest.WaitFor(t, "limit3 to bring Xpos to [AXIS_X]MAX_LIMIT", func() bool { return math.Abs(getp("limit3.0.out")-10) < 1e-9 })
	rttest.WaitFor(t, "Xvel to settle at 0", func() bool { return math.Abs(getp("ddt.0.out")) < 1e-6 })
	assert.Zero(t, getp("stepgen.0.position-fb"), "pid and stepgen disabled: the joint has not moved")
	assert.Zero(t, getp("halpanel.meter"))

	// Machine on: the joint follows to the limit, within [JOINT_0]FERROR,
	// and the panel in its own process shows it.
	out, err = halcmdIn(t, dir, "sets", "machine-on", "TRUE")
	require.NoError(t, err, out)
	rttest.WaitFor(t, "the joint at MAX_LIMIT within FERROR", func() bool {
		return math.Abs(getp("stepgen.0.position-fb")-10) < 0.05
	})
	rttest.WaitFor(t, "the panel's meter at the joint's position", func() bool {
		return math.Abs(getp("halpanel.meter")-10) < 0.05
	})
	assert.LessOrEqual(t, getp("limit3.0.out"), 10+1e-9, "never past the limit")

	require.NoError(t, host.Process.Signal(syscall.SIGINT))
	require.NoError(t, host.Wait(), "Ctrl-C ends halrun and its panel with status 0")
	assert.Empty(t, entries(t, dir), "nothing left behind")
}

// startSimHost runs halrun -i ini file until the test ends, with halpanel
// and halcmd on PATH, and returns once the file is loaded.
func startSimHost(t *testing.T, dir, ini, file string) *exec.Cmd {
	t.Helper()
	rttest.Program(t, "../halpanel")
	rttest.Program(t, "../halcmd")
	cmd := exec.Command(rttest.Program(t, "."), append(append([]string{}, rtFlags...), "-shm-dir", dir, "-i", ini, file)...)
	cmd.Env = append(os.Environ(), "PATH="+rttest.ProgramDir()+":"+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	rd := bufio.NewReader(stdout)
	var seen strings.Builder
	for {
		line, err := rd.ReadString('\n')
		seen.WriteString(line)
		require.NoError(t, err, seen.String())
		if strings.Contains(line, "Ctrl-C ends") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, rd) }()
	return cmd
}
