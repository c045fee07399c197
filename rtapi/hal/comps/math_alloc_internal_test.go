package comps

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// The functions of every math, compare and conversion component allocate
// nothing: they run on the real-time thread.
func TestMathAndConvFunctionsDoNotAllocate(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	type maker = struct {
		name string
		make funcMaker
	}
	for _, m := range append(append([]maker{}, mathComps...), convPairs...) {
		c, err := h.NewComponent(m.name)
		require.NoError(t, err)
		f := m.make(c, m.name+".0")
		require.NoError(t, c.Ready(), m.name)
		if a := testing.AllocsPerRun(100, func() { f(time.Millisecond, 0) }); a != 0 {
			t.Errorf("%s: %v allocations", m.name, a)
		}
	}
	if len(mathComps) != 11 || len(convPairs) != 29 {
		t.Errorf("%d math components and %d converters, want 11 and 29", len(mathComps), len(convPairs))
	}
}
