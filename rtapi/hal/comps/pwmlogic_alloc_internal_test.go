package comps

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// pwmgen's two functions, debounce and every logic component allocate
// nothing, with their inputs toggling every call through a signal.
func TestPwmLogicHotPathsDoNotAllocate(t *testing.T) {
	b := newBench(t, "pwmlogic")
	g := newPwmgen(b.c, []int32{0, 1, 2})
	fns := []hal.Func{
		g.makePulses, g.update,
		newDebounceGroup(b.c, 0, 3),
		newEstopLatch(b.c, "estop"),
		newChargePump(b.c, "cp"),
		newOneshot(b.c, "one"),
		newFlipflop(b.c, "ff"),
		newEdge(b.c, "edge"),
		newToggle(b.c, "tog"),
		newTimedelay(b.c, "td"),
		newLogic(b.c, "logic", 0x1f10),
		newUpdown(b.c, "ud"),
	}
	drive := b.c.Bit("drive", hal.Out)
	b.ready()
	require.NoError(t, b.h.NewSignal("sq", hal.TypeBit))
	for _, pin := range []string{"drive", "debounce.0.0.in", "estop.reset", "one.in", "ff.clk", "ff.data", "edge.in",
		"tog.in", "td.in", "logic.in-00", "logic.in-15", "ud.countup", "ud.reset"} {
		require.NoError(t, b.h.Link(pin, "sq"))
	}
	for ch := range 3 {
		g.ch[ch].enable.Set(true)
		g.ch[ch].pwmFreq.Set(4000)
		g.ch[ch].ditherPwm.Set(ch == 1)
	}
	b.set("one.width", 0.002)
	b.set("td.on-delay", 0.001)
	b.set("td.off-delay", 0.001)
	b.set("edge.out-width-ns", 1500000)
	n := 0
	if a := testing.AllocsPerRun(200, func() {
		n++
		drive.Set(n%3 != 0)
		for ch := range 3 {
			g.ch[ch].value.Set(float64(n%7-3) / 4)
		}
		for _, fn := range fns {
			fn(time.Millisecond, int64(n))
		}
	}); a != 0 {
		t.Errorf("%v allocations per cycle", a)
	}
}
