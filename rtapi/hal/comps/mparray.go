package comps

import (
	"fmt"
	"math"
	"strings"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// mpIntArray reads the loadrt argument key as LinuxCNC's RTAPI_MP_ARRAY_INT
// does (uspace_rtapi_main.cc do_comp_args): comma-separated, each item
// parsed by strtol base 0 and stored in an int, at most len(into) items.
// Items not given keep their value in into. A bad item or too many items
// is ErrInvalid.
func mpIntArray(a *hal.LoadArgs, key string, into []int32) error {
	v, ok := a.Get(key)
	if !ok {
		return nil
	}
	for i, item := range strings.Split(v, ",") {
		if i == len(into) {
			return fmt.Errorf("loadrt %s: %s=%s: can only take %d arguments: %w", a.Name, key, v, len(into), rtapi.ErrInvalid)
		}
		n, ok := mpStrtol(item)
		if !ok {
			return fmt.Errorf("loadrt %s: %q invalid for parameter %q: %w", a.Name, item, key, rtapi.ErrInvalid)
		}
		into[i] = int32(n) // long to int, as C truncates it
	}
	return nil
}

// mpStrtol is C's strtol(s, &end, 0) on a 64-bit long, and ok is *end ==
// 0: leading white space, a sign, 0x for hex, 0 for octal; an empty
// string is 0; an overflow saturates.
func mpStrtol(s string) (n int64, ok bool) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+2 < len(s) && s[i] == '0' && s[i+1]|0x20 == 'x' && mpDigit(s[i+2]) < 16:
		base = 16
		i += 2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	start := i
	var u uint64
	over := false
	for ; i < len(s); i++ {
		d := mpDigit(s[i])
		if d >= base {
			break
		}
		if u > (math.MaxUint64-d)/base {
			over = true
		} else {
			u = u*base + d
		}
	}
	if i == start {
		return 0, len(s) == 0 // no digits: end is s itself
	}
	switch {
	case neg && (over || u > 1<<63):
		n = math.MinInt64
	case neg:
		n = int64(-u)
	case over || u > math.MaxInt64:
		n = math.MaxInt64
	default:
		n = int64(u)
	}
	return n, i == len(s)
}

func mpDigit(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'z':
		return uint64(c|0x20-'a') + 10
	}
	return 99
}
