package main

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RTAPI_INSTANCE alone names the host, as it does to halrun and every
// rtapi program (issue 40 part 7). Before, halcmd read only its own
// -rtapi.instance flag and said "no HAL host of instance 0".
func TestInstanceFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, "../halrun/testdata/servo-loop.hal")
	_, bin := binaries(t)
	cmd := exec.Command(bin, "-shm-dir", dir, "getp", "pid.0.Pgain")
	cmd.Env = append(os.Environ(), "RTAPI_INSTANCE=7")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.NotEmpty(t, out)
}

// The examples' one command-line style (HACKING.md): -h exits 0 with the
// usage on stderr, bad usage exits 2, a failure 1, each "halcmd: ...".
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"help", []string{"-h"}, 0, "usage: halcmd [flags] COMMAND"},
		{"bad flag", []string{"-bogus"}, 2, "flag provided but not defined: -bogus"},
		{"no command", nil, 2, "halcmd: give a command"},
		{"command and file", []string{"-f", "x.hal", "show"}, 2, "halcmd: give a command or -f FILE, not both"},
		{"unknown verb", []string{"frobnicate"}, 2, `halcmd: unknown command "frobnicate"`},
		{"instance", []string{"-rtapi.instance", "-1", "show"}, 2, "rtapi.instance"},
		{"no host", []string{"-shm-dir", t.TempDir(), "-rtapi.instance", "3", "show"}, 1, "halcmd: no HAL host of instance 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := command(tc.args, &stdout, &stderr)
			require.Equal(t, tc.code, code, stderr.String())
			require.Contains(t, stderr.String(), tc.err)
			require.Empty(t, stdout.String())
		})
	}
}
