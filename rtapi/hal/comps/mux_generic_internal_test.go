package comps

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// config= items parse as mux_generic.c parses them.
func TestMuxGenericSpec(t *testing.T) {
	sp, err := parseMuxGenSpec("ff8")
	require.NoError(t, err)
	assert.Equal(t, muxGenSpec{in: muxGenFloat, out: muxGenFloat, size: 8}, sp)
	sp, err = parseMuxGenSpec("B4U")
	require.NoError(t, err)
	assert.Equal(t, muxGenSpec{in: muxGenBit, out: muxGenU32, size: 4}, sp)
	sp, err = parseMuxGenSpec("s99999")
	require.NoError(t, err)
	assert.Equal(t, 1024, sp.size)
	for _, bad := range []string{"f", "f1", "8", "ff8b", "fx8", "f0"} {
		_, err := parseMuxGenSpec(bad)
		assert.True(t, errors.Is(err, rtapi.ErrInvalid), bad)
	}
	// mux_generic.c's loop: 2^k and 2^k+1 get k sel-bit pins.
	for size, want := range map[int]int{2: 1, 3: 1, 4: 2, 5: 2, 6: 0, 8: 3, 9: 3, 10: 0, 12: 0, 16: 4, 1024: 10} {
		assert.Equal(t, want, muxGenNumBits(size), size)
	}
}

// Float conversions clamp and truncate as write_fp does on x86-64.
func TestMuxGenericConversions(t *testing.T) {
	assert.Equal(t, int32(2), muxGenFloatS32(2.9))
	assert.Equal(t, int32(-2), muxGenFloatS32(-2.9))
	assert.Equal(t, int32(math.MaxInt32), muxGenFloatS32(1e10))
	assert.Equal(t, int32(math.MinInt32), muxGenFloatS32(-1e10))
	assert.Equal(t, int32(math.MinInt32), muxGenFloatS32(math.NaN()))
	assert.Equal(t, uint32(3), muxGenFloatU32(3.99))
	assert.Equal(t, uint32(0), muxGenFloatU32(-0.5))
	assert.Equal(t, uint32(math.MaxUint32), muxGenFloatU32(1e10))
	assert.Equal(t, uint32(0), muxGenFloatU32(math.NaN()))
}

// write_fp allocates nothing, for every input/output type pair.
func TestMuxGenericNoAllocs(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	c, err := h.NewComponent("mux_generic")
	require.NoError(t, err)
	var insts []*muxGenInst
	n := 0
	for in := muxGenBit; in <= muxGenU32; in++ {
		for out := muxGenBit; out <= muxGenU32; out++ {
			insts = append(insts, newMuxGeneric(c, fmt.Sprintf("mux-gen.%02d", n), muxGenSpec{in: in, out: out, size: 4}))
			n++
		}
	}
	require.NoError(t, c.Ready())
	for _, m := range insts {
		m.selInt.Set(uint32(n))
		n++
		a := testing.AllocsPerRun(100, func() { m.update(time.Millisecond, 0) })
		assert.Zero(t, a, "%+v", m.sp)
	}
}
