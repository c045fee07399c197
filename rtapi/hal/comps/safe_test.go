package comps_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// A file's safep lines are its threads' safe states: when the thread
// stops, the signal its pin is on takes the safe value.
func TestSafePFromAHalFile(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	clock, err := sim.New(rt)
	require.NoError(t, err)
	require.NoError(t, loadText(t, h, "amp.hal", `
loadrt threads name1=servo period1=1000000
loadrt and2
addf and2.0 servo
net enable => and2.0.in0 and2.0.in1
net amp-enable and2.0.out
sets enable TRUE
safep servo and2.0.in0 FALSE   # drops the enable signal
safep servo and2.0.out FALSE   # and the amplifier's enable at once
start
`))
	require.NoError(t, clock.Advance(3*time.Millisecond))
	get := func(sig string) string {
		v, err := h.GetS(sig)
		require.NoError(t, err)
		return v
	}
	require.Equal(t, "TRUE", get("amp-enable"))
	require.NoError(t, h.Stop())
	require.Equal(t, "FALSE", get("enable"))
	require.Equal(t, "FALSE", get("amp-enable"))

	for _, bad := range []string{"safep servo and2.0.in0 maybe", "safep servo no.such.pin 0", "safep nothread and2.0.in0 0"} {
		require.ErrorIs(t, loadText(t, h, "bad.hal", bad), rtapi.ErrInvalid, bad)
	}
}

// save writes a thread's safep lines, so the saved file rebuilds its safe
// states; a Go function's is named in a comment. Before, save left them
// out and the rebuilt HAL had none.
func TestSaveWritesSafeP(t *testing.T) {
	h := newHAL(t)
	require.NoError(t, loadText(t, h, "amp.hal", `
loadrt threads name1=servo period1=1000000
loadrt and2
loadrt scale
addf and2.0 servo
addf scale.0 servo
net enable => and2.0.in0 and2.0.in1
net amp-enable and2.0.out
sets enable TRUE
safep servo and2.0.out FALSE
safep servo scale.0.out 0.1
`))
	servo, ok := h.Thread("servo")
	require.True(t, ok)
	require.NoError(t, servo.AddSafeState("brake", func() {}))
	var saved bytes.Buffer
	require.NoError(t, h.Save(&saved))
	assert.Contains(t, saved.String(), "# safe states\nsafep servo and2.0.out FALSE\nsafep servo scale.0.out 0.1\n# thread servo: safe state brake is a Go function\n")

	h2 := newHAL(t)
	require.NoError(t, loadText(t, h2, "saved.hal", saved.String()))
	servo2, ok := h2.Thread("servo")
	require.True(t, ok)
	assert.Equal(t, []string{"and2.0.out", "scale.0.out"}, servo2.SafeStates())
	require.NoError(t, h2.Start())
	require.NoError(t, h2.Stop())
	v, err := h2.GetS("amp-enable")
	require.NoError(t, err)
	assert.Equal(t, "FALSE", v)
	v, err = h2.GetP("scale.0.out")
	require.NoError(t, err)
	assert.Equal(t, "0.1", v)
}
