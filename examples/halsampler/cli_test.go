package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	require.NoError(t, cmd.Run(), e.String())
	require.Equal(t, 3, strings.Count(o.String(), "\n"), o.String())
}

// The command line is LinuxCNC's sampler_usr.c's (issue 40): its
// messages, each exit 1; -h exits 0 with the usage on stderr. Before,
// halsampler took Go flags only: -n10 and -c0 were "flag provided but
// not defined", a FILE "unexpected argument", both exit 2.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"help", []string{"-h"}, 0, "usage: halsampler [-c CHAN]"},
		{"unknown", []string{"-bogus"}, 1, "ERROR: unknown option 'bogus'\n"},
		{"double dash", []string{"--n", "3"}, 1, "ERROR: unknown option '-n'\n"},
		{"two files", []string{"a", "b"}, 1, "ERROR: At most one filename may be specified\n"},
		{"channel", []string{"-c", "99"}, 1, "ERROR: invalid channel number '99'\n"},
		{"channel joined", []string{"-c16"}, 1, "ERROR: invalid channel number '16'\n"},
		{"channel word", []string{"-c", "1x"}, 1, "ERROR: invalid channel number '1x'\n"},
		{"count", []string{"-n", "-1"}, 1, "ERROR: invalid sample count '-1'\n"},
		{"count joined", []string{"-nx"}, 1, "ERROR: invalid sample count 'x'\n"},
		{"instance", []string{"-rtapi.instance", "-1"}, 1, "rtapi.instance"},
		{"no host", []string{"-shm-dir", t.TempDir(), "-rtapi.instance", "3", "-c1", "-n10"}, 1, "halsampler: sampler channel 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := command(tc.args, &stdout, &stderr)
			require.Equal(t, tc.code, code, stderr.String())
			if strings.HasPrefix(tc.err, "ERROR") {
				require.Equal(t, tc.err, stderr.String())
			}
			require.Contains(t, stderr.String(), tc.err)
			require.Empty(t, stdout.String())
		})
	}
}

// Every spelling of LinuxCNC's options reads the host alike: -n N and
// -nN, -c N and -cN, -t, and a FILE that takes the lines in place of
// standard output (created, or truncated). -n 0 prints nothing and exits
// 0, as LinuxCNC's (before, it ran until the host exited).
func TestLinuxCNCSpellings(t *testing.T) {
	if testing.Short() {
		t.Skip("runs halrun and seven halsampler processes")
	}
	dir := t.TempDir()
	host(t, dir, 4000)
	for _, args := range [][]string{{"-n", "5"}, {"-n5"}, {"-c0", "-n5"}, {"-c", "0", "-n", "5"}} {
		out, errOut, err := halsampler(t, dir, args...)
		require.NoError(t, err, "%q: %s", args, errOut)
		// each reader after the first starts with LinuxCNC's "overrun" line
		lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(out, "overrun\n"), "\n"), "\n")
		require.Len(t, lines, 5, "%q", args)
		assert.Len(t, strings.Fields(lines[0]), 3, "%q: no tag", args)
	}
	out, errOut, err := halsampler(t, dir, "-t", "-n", "4")
	require.NoError(t, err, errOut)
	cycles, _, _, _ := parse(t, strings.TrimPrefix(out, "overrun\n"))
	require.Len(t, cycles, 4)

	file := filepath.Join(dir, "out.txt")
	require.NoError(t, os.WriteFile(file, []byte(strings.Repeat("old line\n", 100)), 0o644))
	out, errOut, err = halsampler(t, dir, "-t", "-n3", file)
	require.NoError(t, err, errOut)
	assert.Empty(t, out)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(strings.TrimPrefix(string(got), "overrun\n"), "\n"), "the file truncated, then 3 lines: %q", got)
	assert.NotContains(t, string(got), "old line")

	out, errOut, err = halsampler(t, dir, "-n", "0")
	require.NoError(t, err, errOut)
	assert.Empty(t, out)
}
