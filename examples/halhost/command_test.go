package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// halhost reads its command line as every example does (HACKING.md,
// "Examples: one command-line style"): -help exits 0, bad usage exits 2
// with a "usage: halhost" line on stderr, a failure exits 1 with
// "halhost: error".
// Before, -help and a bad flag printed the flag package's "Usage of PATH:"
// and command did not exist: main parsed the global flag set.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-help"}, 0, "usage: halhost ["},
		{[]string{"-no-such-flag"}, 2, "usage: halhost ["},
		{[]string{"extra"}, 2, `halhost: unexpected argument "extra"`},
		{[]string{"-stats-key", "0"}, 2, "halhost: "},
		{[]string{"-hal", "testdata/bad.hal"}, 1, "halhost: testdata/bad.hal:2: "},
	} {
		var stdout, stderr bytes.Buffer
		code := command(tc.args, &stdout, &stderr)
		assert.Equal(t, tc.code, code, "%q: %s", tc.args, &stderr)
		assert.Contains(t, stderr.String(), tc.stderr, "%q", tc.args)
		if tc.stderr == "usage: halhost [" {
			assert.Contains(t, stderr.String(), "\nflags:\n", "%q: the usage ends with the flags", tc.args)
		}
	}
}
