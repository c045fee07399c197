package main

import (
	"bytes"
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
)

// halsampler's standard output is LinuxCNC's byte for byte: "%f" floats,
// 0/1 bits, decimal integers, each followed by a space; -t numbers the
// samples the sampler wrote from 0; a reader whose first sample is not
// number 0 prints "overrun" first, as LinuxCNC's does when another
// reader took samples before it.
func TestPrintsAsLinuxCNC(t *testing.T) {
	t.Parallel()
	types := []hal.Type{hal.TypeFloat, hal.TypeBit, hal.TypeS32, hal.TypeU32, hal.TypeS64, hal.TypeU64}
	vals := []uint64{math.Float64bits(-0.8765499999999999), 1, uint64(1<<64 - 3), 4000000000, uint64(1<<64 - 1), 1 << 63}
	var out bytes.Buffer
	p := printer{types: types, tag: true, stderr: io.Discard}
	require.NoError(t, p.print(&out, sampler.Sample{Cycle: 0, Values: vals}))
	require.NoError(t, p.print(&out, sampler.Sample{Cycle: 3, Dropped: 2, Values: vals}))
	assert.Equal(t, "0 -0.876550 1 -3 4000000000 -1 9223372036854775808 \n"+
		"1 -0.876550 1 -3 4000000000 -1 9223372036854775808 \n", out.String(),
		"drops are not numbered: LinuxCNC counts the samples written")

	out.Reset()
	p = printer{types: types[:1], stderr: io.Discard}
	require.NoError(t, p.print(&out, sampler.Sample{Cycle: 10, Dropped: 4, Values: vals[:1]}))
	require.NoError(t, p.print(&out, sampler.Sample{Cycle: 11, Dropped: 4, Values: []uint64{math.Float64bits(math.Inf(-1))}}))
	assert.Equal(t, "overrun\n-0.876550 \n-inf \n", out.String())
}
