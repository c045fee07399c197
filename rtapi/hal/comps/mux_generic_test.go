package comps_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The selection is sel-bits plus sel-int, clamped to the last input;
// debounce-us delays a change; suppress-no-input holds at selection 0.
func TestMuxGenericSelect(t *testing.T) {
	r := load(t, servo+`loadrt mux_generic config=ff8,fs5
addf mux-gen.00 servo
addf mux-gen.01 servo
setp mux-gen.00.in-float-03 3.5
setp mux-gen.00.in-float-07 7.5
setp mux-gen.00.in-float-00 0.25
setp mux-gen.01.in-float-04 -2.7
`)
	r.setp("mux-gen.00.sel-bit-00", "1")
	r.setp("mux-gen.00.sel-bit-01", "1")
	r.cycles("servo", 1)
	assert.Equal(t, 3.5, r.get("mux-gen.00.out-float"))
	r.setp("mux-gen.00.sel-int", "100")
	r.cycles("servo", 1)
	assert.Equal(t, 7.5, r.get("mux-gen.00.out-float"))
	r.setp("mux-gen.01.sel-bit-01", "1") // 5 inputs get 2 bits, as in C
	r.setp("mux-gen.01.sel-int", "2")
	r.cycles("servo", 1)
	assert.Equal(t, -2.0, r.get("mux-gen.01.out-s32"))

	r.setp("mux-gen.00.debounce-us", "2500")
	r.setp("mux-gen.00.sel-int", "0")
	r.setp("mux-gen.00.sel-bit-00", "0")
	r.setp("mux-gen.00.sel-bit-01", "0")
	for k := 1; k <= 3; k++ {
		r.cycles("servo", 1)
		assert.Equal(t, 7.5, r.get("mux-gen.00.out-float"), k)
	}
	r.cycles("servo", 1)
	assert.Equal(t, 0.25, r.get("mux-gen.00.out-float"))

	r.setp("mux-gen.00.suppress-no-input", "1")
	r.setp("mux-gen.00.sel-int", "7")
	r.cycles("servo", 4)
	assert.Equal(t, 7.5, r.get("mux-gen.00.out-float"))
	r.setp("mux-gen.00.sel-int", "0")
	r.setp("mux-gen.00.in-float-07", 9.0)
	r.cycles("servo", 4)
	assert.Equal(t, 7.5, r.get("mux-gen.00.out-float"))
}
