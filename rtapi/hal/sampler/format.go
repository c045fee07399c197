package sampler

import (
	"math"
	"strconv"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// AppendLinuxCNC appends a pin's word (as hal.FormatValue reads it) and a
// space, byte for byte as LinuxCNC's halsampler prints it: a float as
// printf's "%f" (six decimals, correctly rounded; inf, -inf, nan, -nan),
// a bit as 0 or 1, an integer in decimal. halstreamer reads it back.
func AppendLinuxCNC(b []byte, t hal.Type, w uint64) []byte {
	switch t {
	case hal.TypeFloat:
		f := math.Float64frombits(w)
		switch {
		case math.IsNaN(f):
			if w>>63 != 0 {
				b = append(b, '-')
			}
			b = append(b, "nan"...)
		case math.IsInf(f, 1):
			b = append(b, "inf"...)
		case math.IsInf(f, -1):
			b = append(b, "-inf"...)
		default:
			b = strconv.AppendFloat(b, f, 'f', 6, 64)
		}
	case hal.TypeBit:
		if w != 0 {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
	case hal.TypeS32:
		b = strconv.AppendInt(b, int64(int32(uint32(w))), 10)
	case hal.TypeU32:
		b = strconv.AppendUint(b, uint64(uint32(w)), 10)
	case hal.TypeS64:
		b = strconv.AppendInt(b, int64(w), 10)
	default:
		b = strconv.AppendUint(b, w, 10)
	}
	return append(b, ' ')
}
