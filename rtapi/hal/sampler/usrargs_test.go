package sampler_test

import (
	"bytes"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
)

// ParseUsrArgs reads a command line as LinuxCNC's sampler_usr.c and
// streamer_usr.c do, with their messages word for word, and hands the
// rtapi flags to the FlagSet.
func TestParseUsrArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts string
		args []string
		want sampler.UsrArgs // RT and ShmDir are checked apart
		msg  string
	}{
		{"cnt", nil, sampler.UsrArgs{Count: -1}, ""},
		{"cnt", []string{"-n", "10"}, sampler.UsrArgs{Count: 10}, ""},
		{"cnt", []string{"-n10"}, sampler.UsrArgs{Count: 10}, ""},
		{"cnt", []string{"-n", "0"}, sampler.UsrArgs{Count: 0}, ""},
		{"cnt", []string{"-n"}, sampler.UsrArgs{Count: 0}, ""},                                 // strtol("") is 0, and nothing follows it
		{"cnt", []string{"-n", "99999999999999999999"}, sampler.UsrArgs{Count: 1<<63 - 1}, ""}, // LONG_MAX
		{"cnt", []string{"-c", "0"}, sampler.UsrArgs{Count: -1}, ""},
		{"cnt", []string{"-c15", "-t", "-n", "+3", "out"}, sampler.UsrArgs{Channel: 15, Count: 3, Tag: true, File: "out"}, ""},
		{"cnt", []string{"-tn3"}, sampler.UsrArgs{Count: -1, Tag: true}, ""}, // -t ignores what follows it
		{"cnt", []string{"-c", " 2"}, sampler.UsrArgs{Channel: 2, Count: -1}, ""},
		{"cnt", []string{"-c", "4294967297"}, sampler.UsrArgs{Channel: 1, Count: -1}, ""}, // int of a long
		{"cnt", []string{"-c", "16"}, sampler.UsrArgs{}, "ERROR: invalid channel number '16'"},
		{"cnt", []string{"-c", " "}, sampler.UsrArgs{}, "ERROR: invalid channel number ' '"},
		{"cnt", []string{"-n", "-2"}, sampler.UsrArgs{}, "ERROR: invalid sample count '-2'"},
		{"cnt", []string{"-n", "1.5"}, sampler.UsrArgs{}, "ERROR: invalid sample count '1.5'"},
		{"cnt", []string{"-s"}, sampler.UsrArgs{}, "ERROR: unknown option 's'"},
		{"cnt", []string{"a", "b"}, sampler.UsrArgs{}, "ERROR: At most one filename may be specified"},
		{"c", []string{"-c3", "f.txt"}, sampler.UsrArgs{Channel: 3, Count: -1, File: "f.txt"}, ""},
		{"c", []string{"-c", "8"}, sampler.UsrArgs{}, "ERROR: invalid channel number '8'"},
		{"c", []string{"-n", "1"}, sampler.UsrArgs{}, "ERROR: unknown option 'n'"},
		{"c", []string{"-t"}, sampler.UsrArgs{}, "ERROR: unknown option 't'"},
		{"c", []string{"-"}, sampler.UsrArgs{}, "ERROR: unknown option ''"},
		{"c", []string{"--c"}, sampler.UsrArgs{}, "ERROR: unknown option '-c'"},
	} {
		maxCh := sampler.MaxChannels
		if tc.opts == "c" {
			maxCh = sampler.MaxStreamChannels
		}
		var out bytes.Buffer
		fs := flag.NewFlagSet("tool", flag.ContinueOnError)
		fs.SetOutput(&out)
		got, err := sampler.ParseUsrArgs(fs, tc.opts, maxCh, tc.args)
		if tc.msg != "" {
			var u *sampler.UsageError
			require.ErrorAs(t, err, &u, "%q", tc.args)
			assert.Equal(t, tc.msg, u.Msg, "%q", tc.args)
			assert.ErrorIs(t, err, rtapi.ErrInvalid)
			assert.Equal(t, tc.msg+"\n", out.String(), "printed on the FlagSet's output")
			continue
		}
		require.NoError(t, err, "%q", tc.args)
		got.RT, got.ShmDir = rtapi.Options{}, ""
		assert.Equal(t, tc.want, got, "%q", tc.args)
	}
}

// The rtapi flags, -shm-dir and -group go to the FlagSet, in any of Go's
// spellings, among LinuxCNC's options.
func TestParseUsrArgsRTAPIFlags(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("tool", flag.ContinueOnError)
	got, err := sampler.ParseUsrArgs(fs, "c", sampler.MaxStreamChannels,
		[]string{"-rtapi.instance", "4", "-shm-dir=/d", "-c", "1", "--group", "g", "in"})
	require.NoError(t, err)
	assert.Equal(t, 4, got.RT.Instance)
	assert.Equal(t, "g", got.RT.ShmGroup)
	assert.Equal(t, "/d", got.ShmDir)
	assert.Equal(t, 1, got.Channel)
	assert.Equal(t, "in", got.File)

	fs = flag.NewFlagSet("tool", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	_, err = sampler.ParseUsrArgs(fs, "c", sampler.MaxStreamChannels, []string{"-shm-dir"})
	assert.ErrorContains(t, err, "flag needs an argument: -shm-dir")
	fs = flag.NewFlagSet("tool", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	_, err = sampler.ParseUsrArgs(fs, "c", sampler.MaxStreamChannels, []string{"-h"})
	assert.ErrorIs(t, err, flag.ErrHelp)
}
