package rtapi

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/backend"
)

func TestToggleSpellings(t *testing.T) {
	for text, want := range map[string]Toggle{
		"auto": Auto, "": Auto, " AUTO ": Auto,
		"on": On, "1": On, "true": On, "T": On, "yes": On,
		"off": Off, "0": Off, "false": Off, "F": Off, "No": Off,
	} {
		got := Toggle(99)
		require.NoError(t, got.Set(text), text)
		require.Equal(t, want, got, text)
		var back Toggle
		require.NoError(t, back.Set(got.String()), "String reads back")
		require.Equal(t, want, back)
	}
}

// A bad value is ErrInvalid and leaves the toggle as it was; a value that
// is none of the three says so.
func TestToggleMisuse(t *testing.T) {
	tg := On
	err := tg.Set("sometimes")
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), "sometimes")
	require.Equal(t, On, tg)
	require.False(t, Toggle(2).Valid())
	require.Equal(t, "Toggle(2)", Toggle(2).String())
	for _, v := range []Toggle{Auto, On, Off} {
		require.True(t, v.Valid())
	}

	// As a flag.Value.
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var lock Toggle
	fs.Var(&lock, "lock", "auto, on or off")
	require.NoError(t, fs.Parse([]string{"-lock", "off"}))
	require.Equal(t, Off, lock)
	require.Error(t, fs.Parse([]string{"-lock=maybe"}))
}

// rtapi's wake modes and toggles convert to the backend's by number: the
// numbering must stay the same, and so must the spelling.
func TestWakeModesMatchBackend(t *testing.T) {
	for m := WakeAuto; m <= WakePosixTimer; m++ {
		require.Equal(t, m.String(), m.backend().String())
		back, err := ParseWakeMode(m.String())
		require.NoError(t, err)
		require.Equal(t, m, back)
	}
	_, err := ParseWakeMode("doorbell")
	require.ErrorIs(t, err, ErrInvalid)
	require.Equal(t, backend.Auto, Auto.backend())
	require.Equal(t, backend.On, On.backend())
	require.Equal(t, backend.Off, Off.backend())
}
