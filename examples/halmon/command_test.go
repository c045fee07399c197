package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// halmon reads its command line as every example does (HACKING.md,
// "Examples: one command-line style"): -help exits 0, bad usage exits 2
// with a "usage: halmon" line on stderr, a failure exits 1 with
// "halmon: error".
// Before, -help and a bad flag printed the flag package's "Usage of PATH:"
// and command did not exist: main parsed the global flag set.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-help"}, 0, "usage: halmon ["},
		{[]string{"-no-such-flag"}, 2, "usage: halmon ["},
		{[]string{"extra"}, 2, `halmon: unexpected argument "extra"`},
		{[]string{"-interval", "0"}, 2, "halmon: "},
		{[]string{"-stats-key", "0x7e571", "-pins-key", "0x7e572", "-count", "1"}, 1, "halmon: no halhost running"},
	} {
		var stdout, stderr bytes.Buffer
		code := command(tc.args, &stdout, &stderr)
		assert.Equal(t, tc.code, code, "%q: %s", tc.args, &stderr)
		assert.Contains(t, stderr.String(), tc.stderr, "%q", tc.args)
		if tc.stderr == "usage: halmon [" {
			assert.Contains(t, stderr.String(), "\nflags:\n", "%q: the usage ends with the flags", tc.args)
		}
	}
}
