package comps_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// halcompile names a component's default instances to_hal(comp_name).N:
// '_' becomes '-' (halcompile.g's to_hal), so loadrt conv_bit_u32 makes
// conv-bit-u32.0 and its function, while names= keeps what it is given
// and the component keeps its loadrt name.
func TestHalcompileDefaultNamesUseDashes(t *testing.T) {
	r := load(t, servo+"loadrt conv_bit_u32\nloadrt estop_latch count=2\nloadrt tristate_float\nloadrt conv_s32_float names=my_a,b\nloadrt charge_pump\n")
	assert.Equal(t, []string{"in bit IN", "out u32 OUT"}, r.pinNames("conv-bit-u32.0"))
	assert.Empty(t, r.pinNames("conv_bit_u32.0"))
	assert.NotEmpty(t, r.pinNames("estop-latch.1"))
	assert.NotEmpty(t, r.pinNames("tristate-float.0"))
	assert.Equal(t, []string{"in s32 IN", "out float OUT"}, r.pinNames("my_a"))
	assert.NotEmpty(t, r.pinNames("charge-pump"))
	var functs []string
	for _, f := range r.h.Functs() {
		functs = append(functs, f.Name())
	}
	assert.Equal(t, []string{"conv-bit-u32.0", "estop-latch.0", "estop-latch.1", "tristate-float.0", "my_a", "b", "charge-pump"}, functs)
}
