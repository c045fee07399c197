package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// This test runs halrun and halscope as real processes.

// binary builds the program name (this package's or a sibling's) once.
func binary(t *testing.T, name string) string {
	t.Helper()
	return rttest.Program(t, "../"+name)
}

func TestMain(m *testing.M) { os.Exit(rttest.Main(m)) }

func host(t *testing.T, dir, file string) {
	t.Helper()
	cmd := exec.Command(binary(t, "halrun"), "-rtapi.flavor", "posix", "-rtapi.lock-memory=off",
		"-rtapi.instance", "11", "-shm-dir", dir, file)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "loaded on flavor") {
			go func() {
				for sc.Scan() {
				}
			}()
			return
		}
	}
	t.Fatalf("halrun ended before loading: %v", cmd.Wait())
}

// halscope in another process triggers on the rising edge of a square
// wave: the CSV holds the pre-trigger samples, then the trigger sample at
// time 0, the first with the bit set; the SVG is written.
func TestHalscopeTriggersOnRisingEdge(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, "testdata/square.hal")
	svg := filepath.Join(dir, "capture.svg")
	cmd := exec.Command(binary(t, "halscope"), "-shm-dir", dir, "-rtapi.instance", "11",
		"-trigger", "1", "-edge", "rising", "-level", "0.5", "-pre", "20", "-n", "100",
		"-names", "saw,clock", "-svg", svg, "-timeout", "60s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	records, err := csv.NewReader(&stdout).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 101)
	assert.Equal(t, []string{"cycle", "time_s", "saw", "clock"}, records[0])
	rows := records[1:]
	assert.Equal(t, "0", rows[20][1], "the trigger sample is at time 0")
	assert.Equal(t, "1", rows[20][3])
	assert.Equal(t, "0", rows[19][3], "the sample before it had the bit clear")
	for i := range 20 {
		assert.Equal(t, "0", rows[i][3], "pre-trigger row %d", i)
		assert.True(t, strings.HasPrefix(rows[i][1], "-"), "pre-trigger row %d has a negative time", i)
	}
	if !strings.Contains(stderr.String(), "missing") { // a loaded machine may drop samples
		for i := 1; i < len(rows); i++ {
			a, _ := strconv.ParseUint(rows[i-1][0], 10, 64)
			b, _ := strconv.ParseUint(rows[i][0], 10, 64)
			assert.Equal(t, a+1, b, "row %d", i)
		}
	}
	data, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(data), "<polyline")
	assert.Contains(t, string(data), ">clock</text>")
}

func TestHalscopeUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-edge", "up"}, {"-n", "0"}, {"-pre", "10", "-n", "10"}, {"-c", "-1"}, {"extra"}} {
		err := exec.Command(binary(t, "halscope"), append([]string{"-shm-dir", t.TempDir()}, args...)...).Run()
		require.Error(t, err, "%q", args)
		assert.Equal(t, 2, err.(*exec.ExitError).ExitCode(), "%q", args)
	}
}

// The host's instance and group come from RTAPI_INSTANCE and
// RTAPI_SHM_GROUP as in every rtapi program (rtapi.RegisterShmFlags), so
// halscope under loadusr, or beside halrun, needs no flags.
func TestInstanceFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, "testdata/square.hal")
	cmd := exec.Command(binary(t, "halscope"), "-shm-dir", dir,
		"-trigger", "1", "-edge", "auto", "-n", "5", "-timeout", "60s")
	cmd.Env = append(os.Environ(), "RTAPI_INSTANCE=11")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	records, err := csv.NewReader(&stdout).ReadAll()
	require.NoError(t, err)
	assert.Len(t, records, 6)
	out, err := exec.Command(binary(t, "halscope"), "-h").CombinedOutput()
	require.NoError(t, err)
	assert.Contains(t, string(out), "-rtapi.shm-group")
	assert.NotContains(t, string(out), "\n  -group")
}
