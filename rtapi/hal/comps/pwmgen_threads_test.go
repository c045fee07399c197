package comps_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// pwmgen's make-pulses and update run in two real threads, as a machine
// runs them: what they share must be atomic (go test -race finds the
// rest).
func TestPwmgenTwoThreads(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{ShmDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	cmds, err := halfile.Parse("pwmgen.hal", strings.NewReader(`loadrt threads name1=base period1=100000 name2=servo period2=1000000
loadrt pwmgen output_type=2
addf pwmgen.make-pulses base
addf pwmgen.update      servo
setp pwmgen.0.pwm-freq 1000
setp pwmgen.0.value -0.5
setp pwmgen.0.enable 1
`))
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	require.NoError(t, h.Start())
	base, _ := h.Thread("base")
	servo, _ := h.Thread("servo")
	for base.Task().Stats().Cycles < 200 || servo.Task().Stats().Cycles < 20 {
		time.Sleep(5 * time.Millisecond) // waits for events: cycles of both threads
	}
	require.NoError(t, h.Stop())
	v, err := h.GetP("pwmgen.0.curr-dc")
	require.NoError(t, err)
	require.Equal(t, "-0.5", v)
}
