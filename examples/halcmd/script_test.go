package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// halcmd -s prints show in LinuxCNC's scriptmode formats, from a running
// halrun in another process: no headers, a pin as "OWNER TYPE DIR
// VALUE NAME", a thread as "PERIOD YES NAME TIME TMAX" with each
// function on its own " NAME" line. Without -s the same host prints the
// headers. Before, -s changed only the prompt and show printed its
// headers.
func TestScriptModeShowOnAHost(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "script.hal")
	require.NoError(t, os.WriteFile(file, []byte("loadrt threads name1=servo period1=1000000\n"+
		"loadrt scale count=1\naddf scale.0 servo\nsetp scale.0.gain 2.5\nnet s scale.0.out\n"), 0o600))
	h := host(t, dir, file)

	out, err := halcmd(t, dir, "-s", "show", "pin", "scale.0.gain")
	require.NoError(t, err, out)
	assert.Equal(t, "scale float IN 2.5 scale.0.gain\n\n", out)
	out, err = halcmd(t, dir, "-s", "show", "sig", "s")
	require.NoError(t, err, out)
	assert.Equal(t, "float  0  s <== scale.0.out\n\n", out)
	out, err = halcmd(t, dir, "-s", "show", "thread")
	require.NoError(t, err, out)
	assert.Regexp(t, `^\d+ YES servo +-?\d+ -?\d+\n scale\.0\n\n$`, out)
	out, err = halcmd(t, dir, "show", "thread")
	require.NoError(t, err, out)
	assert.Regexp(t, `^Realtime Threads:\n     Period  FP     Name               \(     Time, Max-Time \)\n +\d+  YES                 servo \( +-?\d+, +-?\d+ \)\n                  1 scale\.0\n\n$`, out)

	require.NoError(t, h.Process.Signal(syscall.SIGINT))
	require.NoError(t, h.Wait())
}
