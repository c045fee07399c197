package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The program really runs on the posix flavor: short moves, exit 0, the
// report printed. No timing is asserted here (the machine is noisy); the
// following-error bound is checked on sim.
func TestProgramRuns(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "servo")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	out, err := exec.Command(bin, "-rtapi.flavor=posix", "-moves", "1,0").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, want := range []string{"flavor posix", "following error: max", "thread servo: period 1ms",
		"motor.0.update", "traj.0.update", "pid.0.update", "task servo:"} {
		require.Contains(t, string(out), want)
	}

	out, err = exec.Command(bin, "-moves", "1,x").CombinedOutput()
	require.Error(t, err, "bad -moves")
	require.Contains(t, string(out), `"x" is not a number`)
	out, err = exec.Command(bin, "-vel", "0").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "must be positive")
}
