package usercomp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/errs"
)

// loadusr's words read as LinuxCNC's getopt("+wWin:") reads them.
func TestParseLoadusr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want LoadusrArgs
	}{
		{[]string{"halui"}, LoadusrArgs{Name: "halui", Program: "halui", Args: []string{}}},
		{[]string{"-W", "./bin/panel.py", "-x"}, LoadusrArgs{WaitReady: true, Name: "panel", Program: "./bin/panel.py", Args: []string{"-x"}}},
		{[]string{"-Wn", "vcp", "pyvcp", "-c", "vcp"}, LoadusrArgs{WaitReady: true, Name: "vcp", Program: "pyvcp", Args: []string{"-c", "vcp"}}},
		{[]string{"-W", "-nvcp", "pyvcp"}, LoadusrArgs{WaitReady: true, Name: "vcp", Program: "pyvcp", Args: []string{}}},
		{[]string{"-w", "sh", "runstreamer"}, LoadusrArgs{WaitExit: true, Name: "sh", Program: "sh", Args: []string{"runstreamer"}}},
		{[]string{"-wi", "false"}, LoadusrArgs{WaitExit: true, IgnoreExit: true, Name: "false", Program: "false", Args: []string{}}},
		{[]string{"-w", "--", "-odd"}, LoadusrArgs{WaitExit: true, Name: "-odd", Program: "-odd", Args: []string{}}},
		{[]string{"-w", "prog", "-W"}, LoadusrArgs{WaitExit: true, Name: "prog", Program: "prog", Args: []string{"-W"}}},
	} {
		got, err := ParseLoadusr(tc.args)
		require.NoError(t, err, "%q", tc.args)
		assert.Equal(t, tc.want, got, "%q", tc.args)
	}
	for args, want := range map[string][]string{
		"no program":       {"-W"},
		"unknown option":   {"-x", "prog"},
		"-n needs a":       {"-Wn"},
		"no program: inva": {"-w", "--"},
	} {
		_, err := ParseLoadusr(want)
		assert.ErrorIs(t, err, errs.Invalid, "%q", want)
		assert.ErrorContains(t, err, args)
	}
}

// Options.resolve: a field beats the environment; the socket beats the
// instance.
func TestOptionsResolve(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	s, _, _, err := Options{Socket: "/a.sock"}.resolve(env(map[string]string{EnvSocket: "/b.sock"}))
	require.NoError(t, err)
	assert.Equal(t, "/a.sock", s)
	s, _, _, err = Options{}.resolve(env(map[string]string{EnvSocket: "/b.sock", EnvInstance: "3"}))
	require.NoError(t, err)
	assert.Equal(t, "/b.sock", s)
	s, dir, inst, err := Options{Dir: "/d"}.resolve(env(map[string]string{EnvInstance: "3"}))
	require.NoError(t, err)
	assert.Equal(t, []any{"", "/d", 3}, []any{s, dir, inst})
	_, _, inst, err = Options{Instance: 5}.resolve(env(map[string]string{EnvInstance: "3"}))
	require.NoError(t, err)
	assert.Equal(t, 5, inst)
	_, _, _, err = Options{}.resolve(env(map[string]string{EnvInstance: "x"}))
	assert.ErrorIs(t, err, errs.Invalid)
	assert.Equal(t, []string{EnvSocket + "=/s", EnvInstance + "=4"}, Env("/s", 4))
}
