package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// These tests run halrun, halsampler and halcmd as real processes, as a
// user would in separate terminals, against a temporary segment directory.

// binary builds the program name (this package's or a sibling's) once.
func binary(t *testing.T, name string) string {
	t.Helper()
	return rttest.Program(t, "../"+name)
}

func TestMain(m *testing.M) { os.Exit(rttest.Main(m)) }

const instance = "9"

// host starts halrun on testdata/consistent.hal with the sampler's depth
// and waits for it to say it is loaded.
func host(t *testing.T, dir string, depth int) *exec.Cmd {
	t.Helper()
	src, err := os.ReadFile("testdata/consistent.hal")
	require.NoError(t, err)
	file := filepath.Join(dir, "consistent.hal")
	require.NoError(t, os.WriteFile(file, bytes.ReplaceAll(src, []byte("depth=4000"), []byte("depth="+strconv.Itoa(depth))), 0o644))
	cmd := exec.Command(binary(t, "halrun"), "-rtapi.flavor", "posix", "-rtapi.lock-memory=off",
		"-rtapi.instance", instance, "-shm-dir", dir, file)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
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

func halsampler(t *testing.T, dir string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(binary(t, "halsampler"), append([]string{"-shm-dir", dir, "-rtapi.instance", instance}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Run()
	return o.String(), e.String(), err
}

// parse reads -t lines: the cycle and the three values.
func parse(t *testing.T, out string) (cycles []uint64, a, b []float64, clk []string) {
	t.Helper()
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 4, "line %d: %q", i, line)
		c, err := strconv.ParseUint(f[0], 10, 64)
		require.NoError(t, err, "line %d", i)
		x, err := strconv.ParseFloat(f[1], 64)
		require.NoError(t, err, "line %d", i)
		y, err := strconv.ParseFloat(f[2], 64)
		require.NoError(t, err, "line %d", i)
		cycles, a, b, clk = append(cycles, c), append(a, x), append(b, y), append(clk, f[3])
	}
	return
}

// halsampler -n 1000 -t in another process prints 1000 consecutive
// cycles of a 20 kHz thread, each with both pins from one cycle.
func TestHalsamplerConsecutiveConsistentCycles(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, 4000)
	out, errOut, err := halsampler(t, dir, "-n", "1000", "-t")
	require.NoError(t, err, errOut)
	assert.Empty(t, errOut, "no drops reported")
	cycles, a, b, clk := parse(t, out)
	require.Len(t, cycles, 1000)
	moved := 0
	for i := range cycles {
		if i > 0 {
			require.Equal(t, cycles[i-1]+1, cycles[i], "line %d: a gap", i)
			if a[i] != a[i-1] {
				moved++
			}
		}
		require.Equal(t, -a[i], b[i], "line %d (cycle %d): pins from different cycles", i, cycles[i])
		require.Contains(t, []string{"0", "1"}, clk[i])
	}
	assert.Equal(t, 999, moved, "the sawtooth moves every cycle, so a mixed sample would show")

	// the next reader goes on where this one stopped; as LinuxCNC's, it
	// first says "overrun", since its first sample is not number 0
	out, errOut, err = halsampler(t, dir, "-n", "10", "-t")
	require.NoError(t, err, errOut)
	rest, ok := strings.CutPrefix(out, "overrun\n")
	require.True(t, ok, "first line: %q", out)
	next, _, _, _ := parse(t, rest)
	assert.Equal(t, cycles[999]+1, next[0])
}

// A reader that starts after the ring filled reports the drops on stderr
// and prints every sample it gets; without -t a line is the values only.
func TestHalsamplerReportsDrops(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, 100)
	halcmd := binary(t, "halcmd")
	rttest.WaitFor(t, "the sampler's ring to fill", func() bool {
		out, err := exec.Command(halcmd, "-shm-dir", dir, "-rtapi.instance", instance, "getp", "sampler.0.overruns").Output()
		n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		return err == nil && n > 0
	})
	out, errOut, err := halsampler(t, dir, "-n", "300")
	require.NoError(t, err, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 300)
	assert.Len(t, strings.Fields(lines[0]), 3)
	assert.Regexp(t, `halsampler: overrun: \d+ samples dropped between cycles \d+ and \d+ \(the ring was full\)`, errOut)
}

func TestHalsamplerUsage(t *testing.T) {
	dir := t.TempDir()
	_, errOut, err := halsampler(t, dir, "-c", "99")
	require.Error(t, err)
	assert.Equal(t, 1, err.(*exec.ExitError).ExitCode(), errOut)
	assert.Equal(t, "ERROR: invalid channel number '99'\n", errOut)
	_, errOut, err = halsampler(t, dir, "-n", "1")
	require.Error(t, err)
	assert.Equal(t, 1, err.(*exec.ExitError).ExitCode())
	assert.Contains(t, errOut, "sampler channel 0")
}
