package cli

import (
	"math"
	"strconv"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// AppendValue formats one pin word as halsampler and halscope print it: a
// bit as 0 or 1, an integer in decimal, a float in the shortest form that
// reads back exactly.
func AppendValue(b []byte, t hal.Type, w uint64) []byte {
	switch t {
	case hal.TypeBit:
		if w != 0 {
			return append(b, '1')
		}
		return append(b, '0')
	case hal.TypeFloat:
		return strconv.AppendFloat(b, math.Float64frombits(w), 'g', -1, 64)
	case hal.TypeS32:
		return strconv.AppendInt(b, int64(int32(uint32(w))), 10)
	case hal.TypeU32:
		return strconv.AppendUint(b, uint64(uint32(w)), 10)
	case hal.TypeS64:
		return strconv.AppendInt(b, int64(w), 10)
	}
	return strconv.AppendUint(b, w, 10)
}
