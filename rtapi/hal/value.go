package hal

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gortapi/gortapi/rtapi"
)

// Type is the type of a pin, parameter or signal (LinuxCNC's hal_type_t).
type Type uint8

// Types. The zero Type is none.
const (
	TypeBit   Type = iota + 1 // bool: HAL_BIT
	TypeFloat                 // float64: HAL_FLOAT
	TypeS32                   // int32: HAL_S32
	TypeU32                   // uint32: HAL_U32
	TypeS64                   // int64: HAL_S64
	TypeU64                   // uint64: HAL_U64
)

var typeNames = [...]string{"", "bit", "float", "s32", "u32", "s64", "u64"}

func (t Type) String() string {
	if int(t) < len(typeNames) && t != 0 {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// ParseType reads "bit", "float", "s32", "u32", "s64" or "u64", or
// LinuxCNC's newer names "bool", "real", "sint" and "uint" (bit, float,
// s64, u64), in any case, as halcmd's newsig does.
func ParseType(s string) (Type, error) {
	for i, n := range typeNames {
		if i > 0 && strings.EqualFold(n, s) {
			return Type(i), nil
		}
	}
	for n, t := range map[string]Type{"bool": TypeBit, "real": TypeFloat, "sint": TypeS64, "uint": TypeU64} {
		if strings.EqualFold(n, s) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown type %q (want bit, float, s32, u32, s64 or u64): %w", s, rtapi.ErrInvalid)
}

func (t Type) valid() bool { return t >= TypeBit && t <= TypeU64 }

// Dir is a pin's direction (hal_pin_dir_t): a component reads an In pin,
// writes an Out pin and may do both with an IO pin.
type Dir uint8

// Pin directions.
const (
	In  Dir = iota + 1 // HAL_IN
	Out                // HAL_OUT
	IO                 // HAL_IO
)

func (d Dir) String() string {
	switch d {
	case In:
		return "IN"
	case Out:
		return "OUT"
	case IO:
		return "I/O"
	}
	return fmt.Sprintf("dir(%d)", uint8(d))
}

// ParamDir says whether a parameter may be set from outside (hal_param_dir_t).
type ParamDir uint8

// Parameter directions.
const (
	RO ParamDir = iota + 1 // HAL_RO: the component writes it, setp refuses it
	RW                     // HAL_RW: setp may write it
)

func (d ParamDir) String() string {
	switch d {
	case RO:
		return "RO"
	case RW:
		return "RW"
	}
	return fmt.Sprintf("pdir(%d)", uint8(d))
}

// ParseValue reads s as a value of type t and returns its word, the way
// halcmd's setp does: a bit is 1, 0, TRUE, FALSE, ON, OFF, YES or NO in
// any case; integers take a 0x or 0 prefix for hex or octal; a float is a
// decimal or hex float. Out-of-range values are refused (ErrInvalid).
func ParseValue(t Type, s string) (uint64, error) {
	bad := func(err error) (uint64, error) {
		return 0, fmt.Errorf("value %q is not a %v: %w", s, t, rtapi.ErrInvalid)
	}
	switch t {
	case TypeBit:
		// LinuxCNC's setps_common_cb: these words, any case.
		for _, w := range [...]string{"1", "TRUE", "ON", "YES"} {
			if strings.EqualFold(s, w) {
				return 1, nil
			}
		}
		for _, w := range [...]string{"0", "FALSE", "OFF", "NO"} {
			if strings.EqualFold(s, w) {
				return 0, nil
			}
		}
		return bad(nil)
	case TypeFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			i, ierr := strconv.ParseInt(s, 0, 64) // strtod takes 0x10
			if ierr != nil {
				return bad(err)
			}
			f = float64(i)
		}
		return math.Float64bits(f), nil
	case TypeS32, TypeS64:
		bits := 32
		if t == TypeS64 {
			bits = 64
		}
		v, err := strconv.ParseInt(s, 0, bits)
		if err != nil {
			return bad(err)
		}
		return uint64(v), nil
	case TypeU32, TypeU64:
		bits := 32
		if t == TypeU64 {
			bits = 64
		}
		v, err := strconv.ParseUint(s, 0, bits)
		if err != nil {
			return bad(err)
		}
		return v, nil
	}
	return 0, fmt.Errorf("%v: %w", t, rtapi.ErrInvalid)
}

// FormatValue prints a word of type t as halcmd's getp does: TRUE or FALSE,
// a float with 7 significant digits, an integer in decimal. Any word is
// valid, so one from shared memory needs no check.
func FormatValue(t Type, w uint64) string {
	switch t {
	case TypeBit:
		if w != 0 {
			return "TRUE"
		}
		return "FALSE"
	case TypeFloat:
		return strconv.FormatFloat(math.Float64frombits(w), 'g', 7, 64)
	case TypeS32:
		return strconv.FormatInt(int64(int32(uint32(w))), 10)
	case TypeU32:
		return strconv.FormatUint(uint64(uint32(w)), 10)
	case TypeS64:
		return strconv.FormatInt(int64(w), 10)
	case TypeU64:
		return strconv.FormatUint(w, 10)
	}
	return "?"
}

// word points at a value's 64-bit word; linking swaps it atomically.
// The handles' Get is an atomic load of the word, Set a storeRelaxed:
// a plain store on amd64 (no XCHG fence per pin write, as LinuxCNC's
// hal_set_*), an atomic one elsewhere and under -race.
type word = atomic.Pointer[uint64]

// Bit is a handle on a bit pin or parameter.
type Bit struct{ w *word }

// Get reads the value.
// RT-safe.
func (h Bit) Get() bool { return atomic.LoadUint64(h.w.Load()) != 0 }

// Set writes the value.
// RT-safe.
func (h Bit) Set(v bool) {
	var u uint64
	if v {
		u = 1
	}
	storeRelaxed(h.w.Load(), u)
}

// Float is a handle on a float pin or parameter.
type Float struct {
	w   *word
	own *uint64 // the pin's own word, nil for a parameter
}

// Get reads the value.
// RT-safe.
func (h Float) Get() float64 { return math.Float64frombits(atomic.LoadUint64(h.w.Load())) }

// Set writes the value.
// RT-safe.
func (h Float) Set(v float64) { storeRelaxed(h.w.Load(), math.Float64bits(v)) }

// SetOwn writes v to the pin's own word, which the pin reads while no
// signal is linked to it, and leaves a linked signal's value alone
// (LinuxCNC's dummysig): a component's own value for an optional input,
// as pid.c's command-deriv when nothing is netted to it. On a parameter
// it is Set.
// RT-safe.
func (h Float) SetOwn(v float64) {
	if h.own == nil {
		h.Set(v)
		return
	}
	storeRelaxed(h.own, math.Float64bits(v))
}

// S32 is a handle on an s32 pin or parameter.
type S32 struct{ w *word }

// Get reads the value.
// RT-safe.
func (h S32) Get() int32 { return int32(uint32(atomic.LoadUint64(h.w.Load()))) }

// Set writes the value.
// RT-safe.
func (h S32) Set(v int32) { storeRelaxed(h.w.Load(), uint64(int64(v))) }

// U32 is a handle on a u32 pin or parameter.
type U32 struct{ w *word }

// Get reads the value.
// RT-safe.
func (h U32) Get() uint32 { return uint32(atomic.LoadUint64(h.w.Load())) }

// Set writes the value.
// RT-safe.
func (h U32) Set(v uint32) { storeRelaxed(h.w.Load(), uint64(v)) }

// S64 is a handle on an s64 pin or parameter.
type S64 struct{ w *word }

// Get reads the value.
// RT-safe.
func (h S64) Get() int64 { return int64(atomic.LoadUint64(h.w.Load())) }

// Set writes the value.
// RT-safe.
func (h S64) Set(v int64) { storeRelaxed(h.w.Load(), uint64(v)) }

// U64 is a handle on a u64 pin or parameter.
type U64 struct{ w *word }

// Get reads the value.
// RT-safe.
func (h U64) Get() uint64 { return atomic.LoadUint64(h.w.Load()) }

// Set writes the value.
// RT-safe.
func (h U64) Set(v uint64) { storeRelaxed(h.w.Load(), v) }
