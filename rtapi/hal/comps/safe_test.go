package comps_test

import (
	"testing"
	"time"

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
