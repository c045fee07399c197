package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// RTAPI_INSTANCE alone names the host, as it does to halrun and every
// rtapi program (issue 40 part 7); halsampler read only its own
// -rtapi.instance flag and looked for instance 0 ("segment does not
// exist").
func TestInstanceFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, 4000)
	cmd := exec.Command(binary(t, "halsampler"), "-shm-dir", dir, "-n", "3")
	cmd.Env = append(os.Environ(), "RTAPI_INSTANCE="+instance)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	require.NoError(t, cmd.Run(), e.String())
	require.Equal(t, 3, strings.Count(o.String(), "\n"), o.String())
}

// The examples' one command-line style (HACKING.md): -h exits 0 with the
// usage on stderr, bad usage exits 2, a failure 1, each "halsampler: ...".
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"help", []string{"-h"}, 0, "usage: halsampler [-c CHAN]"},
		{"bad flag", []string{"-bogus"}, 2, "flag provided but not defined: -bogus"},
		{"argument", []string{"extra"}, 2, `halsampler: unexpected argument "extra"`},
		{"channel", []string{"-c", "99"}, 2, "halsampler: -n must be >= 0, -c 0 to"},
		{"instance", []string{"-rtapi.instance", "-1"}, 2, "rtapi.instance"},
		{"no host", []string{"-shm-dir", t.TempDir(), "-rtapi.instance", "3"}, 1, "halsampler: "},
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
