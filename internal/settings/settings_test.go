package settings

import (
	"errors"
	"flag"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/errs"
)

// opts is an options struct as rtapi.Options is one.
type opts struct {
	Name    string
	Count   int
	Wait    time.Duration
	On      bool
	flagged uint32
}

func positive(n int) (int, error) {
	switch {
	case n == 0:
		return 7, nil // the default
	case n < 0:
		return n, errs.Invalid
	}
	return n, nil
}

func parseBool(s string) (bool, error) {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, errs.Invalid
	}
	return v, nil
}

var table = Table[opts]{{
	Field: "Name", Flag: "name", Env: "NAME",
	Value: Field[opts, string]{At: func(o *opts) *string { return &o.Name }, Unset: IsZero[string],
		Decode: Text, Text: func(s string) string { return s }},
}, {
	Field: "Count", Flag: "count", Env: "COUNT",
	Value: Field[opts, int]{At: func(o *opts) *int { return &o.Count }, Unset: IsZero[int],
		Decode: Int, Verify: positive, Text: strconv.Itoa},
}, {
	Field: "Wait", Flag: "wait", Env: "WAIT",
	Value: Field[opts, time.Duration]{At: func(o *opts) *time.Duration { return &o.Wait }, Unset: IsZero[time.Duration],
		Decode: Duration, Text: time.Duration.String},
}, {
	Field: "On", Flag: "on", Env: "ON",
	Value: Field[opts, bool]{At: func(o *opts) *bool { return &o.On }, Unset: IsZero[bool],
		Decode: parseBool, Text: strconv.FormatBool, Bool: true},
}}

type env map[string]string

func (e env) get(k string) string { return e[k] }

// The field beats the environment, the environment beats the default,
// and an empty variable is unset.
func TestResolveOrder(t *testing.T) {
	o := opts{Name: "code"}
	require.NoError(t, table.Resolve(&o, 0, env{"NAME": "env", "COUNT": "3", "WAIT": ""}.get))
	require.Equal(t, opts{Name: "code", Count: 3}, o)

	o = opts{}
	require.NoError(t, table.Resolve(&o, 0, env{}.get))
	require.Equal(t, 7, o.Count, "unset: the default")
}

// A flag given counts even at its zero value, and beats the environment;
// a yes/no flag stands alone.
func TestRegisterMarksFlagsGiven(t *testing.T) {
	var o opts
	fs := flag.NewFlagSet("p", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	table.Register(fs, &o, &o.flagged, func(field string) bool { return field != "Wait" })
	require.Nil(t, fs.Lookup("wait"), "not wanted: not registered")
	require.NoError(t, fs.Parse([]string{"-name=", "-on", "-count", "5"}))
	require.NoError(t, table.Resolve(&o, o.flagged, env{"NAME": "env", "ON": "false"}.get))
	require.Equal(t, "", o.Name, "-name= given: the environment does not fill it in")
	require.True(t, o.On)
	require.Equal(t, 5, o.Count)

	err := fs.Parse([]string{"-count", "-2"})
	require.ErrorContains(t, err, `invalid value "-2" for flag -count`, "a flag's value is checked as it is parsed")
	require.Equal(t, 5, o.Count, "a refused value leaves the field")
}

// Bad text names its source.
func TestResolveRefusals(t *testing.T) {
	for _, c := range []struct {
		env  env
		want string
	}{
		{env{"COUNT": "many"}, `COUNT="many": "many" is not an integer`},
		{env{"COUNT": "-1"}, `COUNT="-1"`},
		{env{"WAIT": "soon"}, `WAIT="soon": "soon" is not a duration`},
	} {
		var o opts
		err := table.Resolve(&o, 0, c.env.get)
		require.ErrorIs(t, err, errs.Invalid, "%v", c.env)
		require.ErrorContains(t, err, c.want)
	}
	var o opts
	o.Count = -4
	err := table.Resolve(&o, 0, env{}.get)
	require.True(t, errors.Is(err, errs.Invalid))
	require.ErrorContains(t, err, "Options.Count")
}
