package comps

import (
	"time"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// The conv_IN_OUT components: ports of the 29 converters LinuxCNC builds
// from conv.comp.in with mkconv.sh (src/hal/components/Submakefile's
// CONVERTERS): every ordered pair of two different types of bit, float,
// s32, s64, u32 and u64 but float to bit, which LinuxCNC does not build.
// Each is a halcompile component with one "function _" (count= or
// names=, default one instance to_hal(NAME).0, e.g. conv-bit-u32.0, as
// halcompile turns '_' into '-'; function the instance name). Each has pins in
// (IN) and out (OUT); a pair whose value can fall outside OUT's range
// also has an out-of-range bit pin and a clamp bit parameter (RW,
// default FALSE):
//
//   - clamp TRUE: an in above OUT's maximum (below its minimum) gives the
//     maximum (minimum) and out-of-range TRUE; any other in converts and
//     clears out-of-range.
//   - clamp FALSE: in converts as C's cast does (integers wrap), and
//     out-of-range is set when out cast back to IN's type differs from
//     in. It is never cleared here: it stays TRUE until a clamped
//     conversion of an in-range value, as in LinuxCNC.
//
// A float converts to an integer as LinuxCNC's x86-64 build (gcc, SSE2)
// does, since C leaves an out-of-range conversion undefined: see
// cvtS32, cvtS64, cvtU32 and cvtU64. Every function is RT-safe.

func init() {
	for _, c := range convPairs {
		hal.Register(c.name, halcompInstances(1, exported(c.make)))
	}
}

var convPairs = []struct {
	name string
	make funcMaker
}{
	{"conv_bit_float", convNoClamp(bitIn, floatOut, func(v bool) float64 { return float64(b2u(v)) })},
	{"conv_bit_s32", convNoClamp(bitIn, s32Out, func(v bool) int32 { return int32(b2u(v)) })},
	{"conv_bit_s64", convNoClamp(bitIn, s64Out, func(v bool) int64 { return int64(b2u(v)) })},
	{"conv_bit_u32", convNoClamp(bitIn, u32Out, func(v bool) uint32 { return uint32(b2u(v)) })},
	{"conv_bit_u64", convNoClamp(bitIn, u64Out, b2u)},

	{"conv_float_s32", convClamp(floatIn, s32Out, floatToInt(cvtS32, -2147483648, 2147483647))},
	{"conv_float_s64", convClamp(floatIn, s64Out, floatToInt(cvtS64, -9223372036854775808, 9223372036854775807))},
	{"conv_float_u32", convClamp(floatIn, u32Out, floatToInt(cvtU32, 0, 4294967295))},
	{"conv_float_u64", convClamp(floatIn, u64Out, floatToInt(cvtU64, 0, 18446744073709551615))},

	{"conv_s32_bit", convClamp(s32In, bitOut, intToBit[int32](true))},
	{"conv_s32_float", convNoClamp(s32In, floatOut, func(v int32) float64 { return float64(v) })},
	{"conv_s32_s64", convNoClamp(s32In, s64Out, func(v int32) int64 { return int64(v) })},
	{"conv_s32_u32", convClamp(s32In, u32Out, intToInt[int32, uint32](false, 0, true, 0))},
	{"conv_s32_u64", convClamp(s32In, u64Out, intToInt[int32, uint64](false, 0, true, 0))},

	{"conv_s64_bit", convClamp(s64In, bitOut, intToBit[int64](true))},
	{"conv_s64_float", convNoClamp(s64In, floatOut, func(v int64) float64 { return float64(v) })},
	{"conv_s64_s32", convClamp(s64In, s32Out, intToInt[int64, int32](true, 2147483647, true, -2147483648))},
	{"conv_s64_u32", convClamp(s64In, u32Out, intToInt[int64, uint32](true, 4294967295, true, 0))},
	{"conv_s64_u64", convClamp(s64In, u64Out, intToInt[int64, uint64](false, 0, true, 0))},

	{"conv_u32_bit", convClamp(u32In, bitOut, intToBit[uint32](false))},
	{"conv_u32_float", convNoClamp(u32In, floatOut, func(v uint32) float64 { return float64(v) })},
	{"conv_u32_s32", convClamp(u32In, s32Out, intToInt[uint32, int32](true, 2147483647, false, 0))},
	{"conv_u32_s64", convNoClamp(u32In, s64Out, func(v uint32) int64 { return int64(v) })},
	{"conv_u32_u64", convNoClamp(u32In, u64Out, func(v uint32) uint64 { return uint64(v) })},

	{"conv_u64_bit", convClamp(u64In, bitOut, intToBit[uint64](false))},
	{"conv_u64_float", convNoClamp(u64In, floatOut, func(v uint64) float64 { return float64(v) })},
	{"conv_u64_s32", convClamp(u64In, s32Out, intToInt[uint64, int32](true, 2147483647, false, 0))},
	{"conv_u64_s64", convClamp(u64In, s64Out, intToInt[uint64, int64](true, 9223372036854775807, false, 0))},
	{"conv_u64_u32", convClamp(u64In, u32Out, intToInt[uint64, uint32](true, 4294967295, false, 0))},
}

// convNoClamp makes a converter without clamp or out-of-range: out =
// conv(in).
func convNoClamp[I, O any, PI getter[I], PO setter[O]](in func(*hal.Component, string) PI,
	out func(*hal.Component, string) PO, conv func(I) O) funcMaker {
	return func(c *hal.Component, p string) hal.Func {
		i, o := in(c, p+".in"), out(c, p+".out")
		return func(time.Duration, int64) { o.Set(conv(i.Get())) }
	}
}

// convClamp makes a converter with an out-of-range pin and a clamp
// parameter; step is conv.comp.in's FUNCTION for the pair.
func convClamp[I, O any, PI getter[I], PO setter[O]](in func(*hal.Component, string) PI,
	out func(*hal.Component, string) PO, step func(v I, clamp, oor bool) (O, bool)) funcMaker {
	return func(c *hal.Component, p string) hal.Func {
		i, o := in(c, p+".in"), out(c, p+".out")
		oor, clamp := c.Bit(p+".out-of-range", hal.Out), c.BitParam(p+".clamp", hal.RW)
		return func(time.Duration, int64) {
			v, r := step(i.Get(), clamp.Get(), oor.Get())
			o.Set(v)
			oor.Set(r)
		}
	}
}

type getter[T any] interface{ Get() T }
type setter[T any] interface{ Set(T) }

func bitIn(c *hal.Component, n string) hal.Bit     { return c.Bit(n, hal.In) }
func floatIn(c *hal.Component, n string) hal.Float { return c.Float(n, hal.In) }
func s32In(c *hal.Component, n string) hal.S32     { return c.S32(n, hal.In) }
func s64In(c *hal.Component, n string) hal.S64     { return c.S64(n, hal.In) }
func u32In(c *hal.Component, n string) hal.U32     { return c.U32(n, hal.In) }
func u64In(c *hal.Component, n string) hal.U64     { return c.U64(n, hal.In) }

func bitOut(c *hal.Component, n string) hal.Bit     { return c.Bit(n, hal.Out) }
func floatOut(c *hal.Component, n string) hal.Float { return c.Float(n, hal.Out) }
func s32Out(c *hal.Component, n string) hal.S32     { return c.S32(n, hal.Out) }
func s64Out(c *hal.Component, n string) hal.S64     { return c.S64(n, hal.Out) }
func u32Out(c *hal.Component, n string) hal.U32     { return c.U32(n, hal.Out) }
func u64Out(c *hal.Component, n string) hal.U64     { return c.U64(n, hal.Out) }

func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

type integer interface {
	~int32 | ~int64 | ~uint32 | ~uint64
}

// intToInt is the step of an integer-to-integer pair. hasMax and hasMin
// say which of mkconv.sh's bound checks the pair compiles in; max and min
// are OUT's bounds in IN's type (they fit it whenever they are checked).
// Unclamped, out-of-range compares IN(OUT(v)) with v, so a same-width
// sign change (s32 -1 to u32 4294967295) does not count, as in C.
func intToInt[I, O integer](hasMax bool, max I, hasMin bool, min I) func(v I, clamp, oor bool) (O, bool) {
	return func(v I, clamp, oor bool) (O, bool) {
		if clamp {
			if hasMax && v > max {
				return O(max), true
			}
			if hasMin && v < min {
				return O(min), true
			}
			return O(v), false
		}
		o := O(v)
		return o, oor || I(o) != v
	}
}

// intToBit is the step of an integer-to-bit pair: above 1 (or, signed,
// below 0) is out of range; out = v != 0.
func intToBit[I integer](signed bool) func(v I, clamp, oor bool) (bool, bool) {
	return func(v I, clamp, oor bool) (bool, bool) {
		if clamp {
			if v > 1 {
				return true, true
			}
			if signed && v < 0 {
				return false, true
			}
			return v != 0, false
		}
		o := v != 0
		return o, oor || I(b2u(o)) != v
	}
}

// floatToInt is the step of a float-to-integer pair: clamp compares v
// with (double)MAX and (double)MIN, which for s64 and u64 round up to
// 2^63 and 2^64, so exactly those convert as cvt says, unclamped.
func floatToInt[O integer](cvt func(float64) O, min, max O) func(v float64, clamp, oor bool) (O, bool) {
	fmax, fmin := float64(max), float64(min)
	return func(v float64, clamp, oor bool) (O, bool) {
		if clamp {
			if v > fmax {
				return max, true
			}
			if v < fmin {
				return min, true
			}
			return cvt(v), false
		}
		o := cvt(v)
		return o, oor || float64(o) != v
	}
}

// Float to integer conversions as gcc compiles C's casts for x86-64
// (SSE2, LinuxCNC's usual build): truncation toward zero, and where C is
// undefined (NaN, ±Inf, out of range), what cvttsd2si gives.

// cvtS32 is (int32_t)v: cvttsd2si's 0x80000000 out of range.
func cvtS32(v float64) int32 {
	if v > -2147483649.0 && v < 2147483648.0 {
		return int32(v)
	}
	return -2147483648
}

// cvtS64 is (int64_t)v: cvttsd2si's 0x8000000000000000 out of range.
func cvtS64(v float64) int64 {
	if v >= -9223372036854775808.0 && v < 9223372036854775808.0 {
		return int64(v)
	}
	return -9223372036854775808
}

// cvtU32 is (uint32_t)v: gcc converts to int64 and keeps the low 32 bits.
func cvtU32(v float64) uint32 { return uint32(cvtS64(v)) }

// cvtU64 is (uint64_t)v: gcc converts v below 2^63 (or NaN) as int64, and
// v - 2^63 otherwise, flipping the top bit back.
func cvtU64(v float64) uint64 {
	const two63 = 9223372036854775808.0
	if !(v >= two63) {
		return uint64(cvtS64(v))
	}
	return uint64(cvtS64(v-two63)) ^ 1<<63
}
