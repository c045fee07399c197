package rtapi

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/internal/sys"
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

// rtapi's wake modes convert to the backend's by number: the
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
}

// Task.Binding is the zero Binding before Start (a zero backend binding
// once read "SCHED_OTHER"), "virtual" on the sim flavor, and the
// kernel's policy name otherwise.
func TestPublicBinding(t *testing.T) {
	require.Equal(t, Binding{}, publicBinding(backend.Binding{}))
	cpus := []int{1}
	b := publicBinding(backend.Binding{Tid: 7, Policy: sys.SchedFIFO, Priority: 90, CPUs: cpus, Wake: backend.WakeTimerfd})
	require.Equal(t, Binding{Tid: 7, Policy: "SCHED_FIFO", Priority: 90, CPUs: []int{1}, Wake: WakeTimerfd}, b)
	cpus[0] = 0
	require.Equal(t, []int{1}, b.CPUs, "its own copy")
	require.Equal(t, Binding{Policy: PolicyVirtual, Priority: 3, Wake: WakeNanosleep},
		publicBinding(backend.Binding{Priority: 3, Wake: backend.WakeNanosleep, Virtual: true}))
}
