package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// halscope reads its command line as every example does (HACKING.md,
// "Examples: one command-line style"): -help exits 0, bad usage exits 2
// with a "usage: halscope" line on stderr, a failure exits 1 with
// "halscope: error".
// Before, its usage had no "flags:" line and command did not exist: main
// parsed the global flag set.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-help"}, 0, "usage: halscope ["},
		{[]string{"-no-such-flag"}, 2, "usage: halscope ["},
		{[]string{"extra"}, 2, `halscope: unexpected argument "extra"`},
		{[]string{"-n", "0"}, 2, "halscope: "},
		{[]string{"-shm-dir", t.TempDir()}, 1, "halscope: sampler channel 0: "},
	} {
		var stdout, stderr bytes.Buffer
		code := command(tc.args, &stdout, &stderr)
		assert.Equal(t, tc.code, code, "%q: %s", tc.args, &stderr)
		assert.Contains(t, stderr.String(), tc.stderr, "%q", tc.args)
		if tc.stderr == "usage: halscope [" {
			assert.Contains(t, stderr.String(), "\nflags:\n", "%q: the usage ends with the flags", tc.args)
		}
	}
}
