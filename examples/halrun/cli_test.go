package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// RTAPI_INSTANCE alone names the instance, as for halcmd, halsampler and
// every rtapi program (issue 40 part 7): the host says which it serves,
// and halcmd given the same variable finds it.
func TestInstanceFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.hal")
	require.NoError(t, os.WriteFile(file, []byte("loadrt threads name1=fast period1=1000000\n"), 0o644))
	env := append(os.Environ(), "RTAPI_INSTANCE=5", "RTAPI_FLAVOR=posix", "RTAPI_LOCK_MEMORY=off")
	cmd := exec.Command(rttest.Program(t, "."), "-shm-dir", dir, "-I", file)
	cmd.Env = env
	cmd.Stdin = strings.NewReader("getp fast.tmax\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), out.String())
	require.Contains(t, out.String(), "halcmd -rtapi.instance 5 talks to it")
	require.NotContains(t, out.String(), "halrun: <stdin>")
}

// The examples' one command-line style (HACKING.md): -h exits 0 with the
// usage on stderr, bad usage exits 2, a failure 1, each "halrun: ...".
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"help", []string{"-h"}, 0, "usage: halrun [flags] [-i INI]"},
		{"bad flag", []string{"-bogus"}, 2, "flag provided but not defined: -bogus"},
		{"bad rtapi flag", []string{"-rtapi.instance", "-1"}, 2, "rtapi.instance"},
		{"two files", []string{"a.hal", "b.hal"}, 2, `halrun: too many arguments`},
		{"file twice", []string{"-f", "a.hal", "b.hal"}, 2, "halrun: gave -f a.hal and also b.hal"},
		{"cleanup and file", []string{"-U", "a.hal"}, 2, "halrun: -U takes no file"},
		{"negative fault", []string{"-fault-after", "-1s", "-f", "a.hal"}, 2, "halrun: -fault-after must not be negative"},
		{"missing file", []string{"-f", filepath.Join(t.TempDir(), "none.hal")}, 1, "halrun: "},
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
