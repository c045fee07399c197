package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// Issue #40: halcmd's unloadrt, through the host's socket, removes a
// component from a running halrun: its function leaves the thread, which
// runs on; its pins leave their signals, which stay; its lines leave
// save. 2000 loadrt/unloadrt rounds (200 under -short) from one file leave no slot behind:
// the component loads again, and the thread runs it.
func TestUnloadrtThroughTheSocket(t *testing.T) {
	dir := t.TempDir()
	h := host(t, dir, "../halrun/testdata/servo-loop.hal")

	out, err := halcmd(t, dir, "unloadrt", "pid")
	require.NoError(t, err, out)
	out, err = halcmd(t, dir, "show", "thread")
	require.NoError(t, err, out)
	assert.NotContains(t, out, "pid.0.do-pid-calcs")
	assert.Contains(t, out, "sim_motor.0.update")
	out, err = halcmd(t, dir, "show", "sig", "pos-fb")
	require.NoError(t, err, out)
	assert.Contains(t, out, "<== sim_motor.0.position-fb")
	assert.NotContains(t, out, "pid.0.feedback")
	out, err = halcmd(t, dir, "save")
	require.NoError(t, err, out)
	assert.NotContains(t, out, "loadrt pid")

	out, err = halcmd(t, dir, "unloadrt", "pid")
	require.Error(t, err)
	assert.Contains(t, out, "component 'pid' is not loaded")
	out, err = halcmd(t, dir, "unloadrt", "pid", "siggen")
	require.Error(t, err)
	assert.Contains(t, out, "unloadrt takes 1 arguments, not 2")

	var b strings.Builder
	for range rttest.Rounds(2000) { // 200 under -short
		b.WriteString("loadrt pid count=2\naddf pid.1.do-pid-calcs servo\nnet pos-fb pid.1.feedback\nunloadrt pid\n")
	}
	b.WriteString("loadrt pid count=2\naddf pid.1.do-pid-calcs servo\nnet pos-fb pid.1.feedback\n")
	file := filepath.Join(dir, "churn.hal")
	require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o600))
	out, err = halcmd(t, dir, "-f", file)
	require.NoError(t, err, out)
	out, err = halcmd(t, dir, "show", "pin", "pid.1.feedback")
	require.NoError(t, err, out)
	assert.Contains(t, out, "pid.1.feedback <== pos-fb")
	out, err = halcmd(t, dir, "show", "thread")
	require.NoError(t, err, out)
	assert.Contains(t, out, "pid.1.do-pid-calcs")

	out, err = halcmd(t, dir, "unload", "all")
	require.NoError(t, err, out)
	out, err = halcmd(t, dir, "show", "comp")
	require.NoError(t, err, out)
	assert.NotContains(t, out, "pid")
	assert.NotContains(t, out, "siggen")

	require.NoError(t, h.Process.Signal(syscall.SIGINT))
	require.NoError(t, h.Wait(), "Ctrl-C ends halrun with status 0")
	assert.Empty(t, entries(t, dir, "gortapi-"), "no segment or socket left")
}
