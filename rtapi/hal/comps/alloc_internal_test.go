package comps

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// pid's calc (PID and auto-tune states) and limit3's next allocate
// nothing: they run on the real-time thread.
func TestHotPathsDoNotAllocate(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	c, err := h.NewComponent("pid")
	require.NoError(t, err)
	l := newPID(c, "pid.0")
	require.NoError(t, c.Ready())
	l.enable.Set(true)
	l.maxoutput.Set(1)
	n := 0.0
	if a := testing.AllocsPerRun(100, func() {
		n++
		l.command.Set(n)
		l.calc(time.Millisecond, 0)
	}); a != 0 {
		t.Errorf("pid calc: %v allocations", a)
	}
	l.tuneMode.Set(true)
	l.tuneStartPin.Set(true)
	if a := testing.AllocsPerRun(100, func() {
		n = -n
		l.feedback.Set(n)
		l.calc(time.Millisecond, 0)
	}); a != 0 {
		t.Errorf("pid auto-tune: %v allocations", a)
	}
	var s limit3State
	if a := testing.AllocsPerRun(100, func() {
		n++
		s.next(0.001, n, s.outOld, false, -1e20, 1e20, 10, 1000, 2)
	}); a != 0 {
		t.Errorf("limit3: %v allocations", a)
	}
}
