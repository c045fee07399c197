package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// halrun -fault-after faults its threads; the file's safep lines run as
// the servo thread's safe state, and halcmd, another process, reads the
// safe values. The injected fault is no error of halrun's exit.
func TestFaultAfterRunsSafeStates(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "amp.hal")
	require.NoError(t, os.WriteFile(file, []byte(`loadrt threads name1=servo period1=1000000
loadrt and2
addf and2.0 servo
net enable => and2.0.in0 and2.0.in1
net amp-enable and2.0.out
sets enable TRUE
safep servo and2.0.in0 FALSE
safep servo and2.0.out FALSE
start
`), 0o600))
	halrun, _ := binaries(t)
	cmd := exec.Command(halrun, append(rtFlags, "-shm-dir", dir, "-fault-after", "300ms", file)...)
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
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	waitLine := func(what string) {
		t.Helper()
		for l := range lines {
			if strings.Contains(l, what) {
				return
			}
		}
		t.Fatalf("halrun ended before printing %q: %v", what, cmd.Wait())
	}
	waitLine("loaded on flavor")
	out, err := halcmd(t, dir, "gets", "amp-enable")
	require.NoError(t, err, out)
	// The fault may already have come on a slow machine: TRUE or FALSE
	// here, FALSE after it.
	assert.Contains(t, []string{"TRUE\n", "FALSE\n"}, out)

	waitLine("injected a fault after 300ms: threads servo failed, their safe states ran")
	for _, sig := range []string{"enable", "amp-enable"} {
		out, err = halcmd(t, dir, "gets", sig)
		require.NoError(t, err, out)
		assert.Equal(t, "FALSE\n", out, "signal %s after the fault", sig)
	}
	// show thread prints no state (LinuxCNC's has none); the host
	// still answers after the fault.
	out, err = halcmd(t, dir, "show", "thread")
	require.NoError(t, err, out)
	assert.Contains(t, out, " servo (")

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	go func() {
		for range lines {
		}
	}()
	require.NoError(t, cmd.Wait(), "an injected fault is no error")
}
