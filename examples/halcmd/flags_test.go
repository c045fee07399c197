package main

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Clusters of single-letter flags split as getopt reads them; a flag's
// value and the command are left alone.
func TestExpandShortFlags(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	for _, b := range []string{"f", "k", "q", "Q", "s", "v", "V", "e"} {
		fs.Bool(b, false, "")
	}
	fs.String("i", "", "")
	fs.String("shm-dir", "", "")
	for _, tc := range []struct{ in, want []string }{
		{[]string{"-kf"}, []string{"-k", "-f"}},
		{[]string{"-kf", "x.hal"}, []string{"-k", "-f", "x.hal"}},
		{[]string{"-ki", "-kf", "-f"}, []string{"-k", "-i", "-kf", "-f"}},
		{[]string{"-shm-dir", "-kf", "-Qk"}, []string{"-shm-dir", "-kf", "-Q", "-k"}},
		{[]string{"setp", "-kf", "1"}, []string{"setp", "-kf", "1"}},
		{[]string{"-bogus", "-ik"}, []string{"-bogus", "-ik"}},
		{[]string{"-f=x"}, []string{"-f=x"}},
	} {
		assert.Equal(t, tc.want, expandShortFlags(fs, tc.in), "%q", tc.in)
	}
}

// -v prints halcmd_info's lines, LinuxCNC's bytes (stray quote and
// missing newlines included).
func TestInfoLines(t *testing.T) {
	t.Parallel()
	for line, want := range map[string][]string{
		"net x a.out => b.in c.in": {"Pin 'a.out' linked to signal 'x'\n", "Pin 'b.in' linked to signal 'x'\n", "Pin 'c.in' linked to signal 'x'\n"},
		"linksp x a.in":            {"Pin 'a.in' linked to signal 'x'\n"},
		"lock tune":                {"Locking completed"},
		"unlock":                   {"Unlocking completed"},
		"addf f servo 1":           {"Function 'f' added to thread 'servo'\n"},
		"delf f servo":             {"Function 'f' removed from thread 'servo'\n"},
		"delsig x":                 {"Signal 'x' deleted'\n"},
		"alias pin a.in speed":     {"pin 'a.in' aliased to 'speed'\n"},
		"unalias param kp":         {"param 'kp' unaliased\n"},
		"loadrt pid count=2":       {"Realtime module 'pid' loaded\n"},
		"start":                    {"Realtime threads started\n"},
		"getp a.in":                nil,
	} {
		c, ok, err := halfile.ParseLine(line)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, want, infoLines(c), line)
	}
}
