package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/stretchr/testify/require"
)

// The program really runs on the posix flavor: short moves, exit 0, the
// report printed. No timing is asserted here (the machine is noisy); the
// following-error bound is checked on sim.
func TestProgramRuns(t *testing.T) {
	rttest.RequireGo(t)
	bin := filepath.Join(t.TempDir(), "servo")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	out, err := exec.Command(bin, "-rtapi.flavor=posix", "-moves", "1,0").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, want := range []string{"flavor posix", "following error: max", "thread servo: period 1ms SCHED_OTHER (not real-time: HAL priority",
		"task servo: SCHED_OTHER prio 0",
		"motor.0.update", "traj.0.update", "pid.0.do-pid-calcs", "task servo:"} {
		require.Contains(t, string(out), want)
	}

	// On sim with this VM's recorded latency, from a bare histogram and
	// from a latency-test -json document.
	hist, err := os.ReadFile("testdata/latency-vm-fifo-1ms.json")
	require.NoError(t, err)
	doc := filepath.Join(t.TempDir(), "latency-test.json")
	require.NoError(t, os.WriteFile(doc, []byte(`{"tool":"gortapi latency-test","tasks":[`+
		`{"name":"base","period_ns":50000,"latency":{"histogram":{"bucket_width_ns":1000,"counts":[5],"count":5,"max_ns":500}}},`+
		`{"name":"servo","period_ns":1000000,"latency":{"histogram":`+string(hist)+`}}]}`), 0o644))
	var following []string
	for _, file := range []string{"testdata/latency-vm-fifo-1ms.json", doc} {
		out, err = exec.Command(bin, "-rtapi.flavor=sim", "-jitter", file).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "flavor sim")
		require.Contains(t, string(out), "thread servo: period 1ms virtual priority")
		require.Contains(t, string(out), "task servo: virtual prio")
		require.Contains(t, string(out), "jitter: histogram of 4928 samples, max 1.000937ms", "the servo task's histogram was picked")
		following = append(following, regexp.MustCompile(`following error: .*`).FindString(string(out)))
	}
	require.NotEmpty(t, following[0])
	require.Equal(t, following[0], following[1], "the same jitter on sim: the same run")

	out, err = exec.Command(bin, "-jitter", "testdata/latency-vm-fifo-1ms.json", "-rtapi.flavor=posix").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "add -rtapi.flavor=sim")
	out, err = exec.Command(bin, "-rtapi.flavor=sim", "-jitter", "main.go").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "neither a latency recording, a histogram as JSON nor a cyclictest histogram file")
	out, err = exec.Command(bin, "-rtapi.flavor=sim", "-jitter", "nonexistent.json").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "no such file")

	out, err = exec.Command(bin, "-moves", "1,x").CombinedOutput()
	require.Error(t, err, "bad -moves")
	require.Contains(t, string(out), `"x" is not a number`)
	out, err = exec.Command(bin, "-vel", "0").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "must be positive")
}
