package main

import (
	"strconv"

	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
)

// appendLinuxCNC appends one sample's line as LinuxCNC's halsampler
// prints it: with tag, the sample's number (%u) and a space; each value
// and a space (sampler.AppendLinuxCNC); a newline.
func appendLinuxCNC(b []byte, tag bool, number uint32, types []hal.Type, values []uint64) []byte {
	if tag {
		b = strconv.AppendUint(b, uint64(number), 10)
		b = append(b, ' ')
	}
	for i, v := range values {
		b = sampler.AppendLinuxCNC(b, types[i], v)
	}
	return append(b, '\n')
}
