package comps

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

func init() { hal.Register("mux_generic", loadMuxGeneric) }

// mux_generic.c's MAX_CHAN, MAX_SIZE and EPS.
const (
	muxGenMaxChan = 100
	muxGenMaxSize = 1024
	muxGenEps     = 2e-7
)

// muxGenType is a mux_generic type letter's HAL type, numbered as
// LinuxCNC's hal_type_t (HAL_BOOL 1, HAL_REAL 2, HAL_S32 3, HAL_U32 4).
type muxGenType int

const (
	muxGenBit muxGenType = iota + 1
	muxGenFloat
	muxGenS32
	muxGenU32
)

// muxGenTypeNames is mux_generic.c's types[]: the pin name infix.
var muxGenTypeNames = [...]string{"invalid", "bit", "float", "s32", "u32"}

// muxGenSpec is one parsed config= item.
type muxGenSpec struct {
	in, out muxGenType
	size    int
}

// parseMuxGenSpec parses a config= item as mux_generic.c does: digits
// make the size (capped at 1024 as they come), b/f/s/u (either case) the
// input then the output type; the output type defaults to the input's.
// Another character, a third type, no type, or a size under 2 is
// ErrInvalid.
func parseMuxGenSpec(s string) (muxGenSpec, error) {
	sp := muxGenSpec{in: -1, out: -1}
	for i := 0; i < len(s); i++ {
		c := s[i]
		var t muxGenType
		switch {
		case c >= '0' && c <= '9':
			sp.size = sp.size*10 + int(c-'0')
			if sp.size > muxGenMaxSize {
				sp.size = muxGenMaxSize
			}
		case c == 'b' || c == 'B':
			t = muxGenBit
		case c == 'f' || c == 'F':
			t = muxGenFloat
		case c == 's' || c == 'S':
			t = muxGenS32
		case c == 'u' || c == 'U':
			t = muxGenU32
		default:
			return sp, fmt.Errorf("mux_generic: invalid character in fmt string %q: %w", s, rtapi.ErrInvalid)
		}
		if t != 0 {
			switch {
			case sp.in == -1:
				sp.in = t
			case sp.out == -1:
				sp.out = t
			default:
				return sp, fmt.Errorf("mux_generic: too many type specifiers in fmt string %q: %w", s, rtapi.ErrInvalid)
			}
		}
	}
	switch {
	case sp.size < 1:
		return sp, fmt.Errorf("mux_generic: No entry count given in %q: %w", s, rtapi.ErrInvalid)
	case sp.size < 2:
		return sp, fmt.Errorf("mux_generic: A one-element mux makes no sense (%q): %w", s, rtapi.ErrInvalid)
	case sp.in == -1:
		return sp, fmt.Errorf("mux_generic: No type specifiers in fmt string %q: %w", s, rtapi.ErrInvalid)
	case sp.out == -1:
		sp.out = sp.in
	}
	return sp, nil
}

// muxGenNumBits is mux_generic.c's count of sel-bit pins for size: it
// is meant for powers of two but, as LinuxCNC's loop is written, a size
// of 2^k+1 gets k pins too (3 gets 1, 5 gets 2, 9 gets 3), others none.
func muxGenNumBits(size int) int {
	s := size
	n := 1
	for s >>= 1; s&1 == 0; s >>= 1 {
		n++
	}
	if s != 1 {
		return 0
	}
	return n
}

// loadMuxGeneric is mux_generic.c's rtapi_app_main: config="SPEC,..."
// (at most 100 items) makes instances mux-gen.00, mux-gen.01, ... (two
// digits, no names=). No config, or a bad item, is ErrInvalid.
func loadMuxGeneric(h *hal.HAL, a *hal.LoadArgs) error {
	v, ok := a.Get("config")
	if !ok || v == "" {
		return fmt.Errorf("loadrt mux_generic: The mux_generic component requires at least one valid format string (config=): %w", rtapi.ErrInvalid)
	}
	items := strings.Split(v, ",")
	if len(items) > muxGenMaxChan {
		return fmt.Errorf("loadrt mux_generic: config=%s: can only take %d arguments: %w", v, muxGenMaxChan, rtapi.ErrInvalid)
	}
	specs := make([]muxGenSpec, 0, len(items))
	for _, it := range items {
		if it == "" {
			// RTAPI_MP_ARRAY_STRING: an empty item ends the list.
			break
		}
		sp, err := parseMuxGenSpec(it)
		if err != nil {
			return fmt.Errorf("loadrt mux_generic: %w", err)
		}
		specs = append(specs, sp)
	}
	if len(specs) == 0 {
		return fmt.Errorf("loadrt mux_generic: The mux_generic component requires at least one valid format string (config=): %w", rtapi.ErrInvalid)
	}
	c, err := h.NewComponent("mux_generic")
	if err != nil {
		return err
	}
	for i, sp := range specs {
		newMuxGeneric(c, fmt.Sprintf("mux-gen.%02d", i), sp)
	}
	return c.Ready()
}

// muxGenInst is mux_generic.c's mux_inst_t. Only the pins of its input
// and output types are non-zero.
type muxGenInst struct {
	sp               muxGenSpec
	selBit           []hal.Bit
	selInt           hal.U32
	suppress         hal.Bit
	debounce         hal.U32
	timer, selection hal.U32
	inBit            []hal.Bit
	inFloat          []hal.Float
	inS32            []hal.S32
	inU32            []hal.U32
	outBit           hal.Bit
	outFloat         hal.Float
	outS32           hal.S32
	outU32           hal.U32
}

// newMuxGeneric makes instance p (mux_generic(9)): function p; pins
// p.sel-bit-NN (bit in, only when muxGenNumBits > 0), p.sel-int (u32
// in), p.in-TYPE-NN (in), p.suppress-no-input (bit in), p.debounce-us
// (u32 in), p.out-TYPE (out); parameters p.elapsed and p.selected (u32
// RO). All start at 0.
func newMuxGeneric(c *hal.Component, p string, sp muxGenSpec) *muxGenInst {
	m := &muxGenInst{sp: sp}
	c.Export(p, m.update)
	for b := range muxGenNumBits(sp.size) {
		m.selBit = append(m.selBit, c.Bit(fmt.Sprintf("%s.sel-bit-%02d", p, b), hal.In))
	}
	m.selInt = c.U32(p+".sel-int", hal.In)
	for i := range sp.size {
		n := fmt.Sprintf("%s.in-%s-%02d", p, muxGenTypeNames[sp.in], i)
		switch sp.in {
		case muxGenBit:
			m.inBit = append(m.inBit, c.Bit(n, hal.In))
		case muxGenFloat:
			m.inFloat = append(m.inFloat, c.Float(n, hal.In))
		case muxGenS32:
			m.inS32 = append(m.inS32, c.S32(n, hal.In))
		case muxGenU32:
			m.inU32 = append(m.inU32, c.U32(n, hal.In))
		}
	}
	m.suppress = c.Bit(p+".suppress-no-input", hal.In)
	m.debounce = c.U32(p+".debounce-us", hal.In)
	m.timer = c.U32Param(p+".elapsed", hal.RO)
	m.selection = c.U32Param(p+".selected", hal.RO)
	n := p + ".out-" + muxGenTypeNames[sp.out]
	switch sp.out {
	case muxGenBit:
		m.outBit = c.Bit(n, hal.Out)
	case muxGenFloat:
		m.outFloat = c.Float(n, hal.Out)
	case muxGenS32:
		m.outS32 = c.S32(n, hal.Out)
	case muxGenU32:
		m.outU32 = c.U32(n, hal.Out)
	}
	return m
}

// update is mux_generic.c's write_fp. The selection is the sel-bit pins
// as a binary number plus sel-int (u32, wrapping). With
// suppress-no-input TRUE a selection of 0 changes nothing. A new
// selection waits until elapsed, growing by period/1000 (µs) each
// period, reaches debounce-us; then selected takes it, elapsed goes to 0
// and out takes in[min(selection, size-1)], converted: to bit, a float
// is |v| > 2e-7, an integer v != 0; to float exactly (bit 1.0/0.0); to
// s32 or u32 clamped to the type's range, a float truncated toward zero.
// A NaN gives s32 -2147483648 and u32 0 as x86-64 gcc's code does.
// LinuxCNC reads past its pins for a selection of 2^31 or more (it
// compares (int)s); gortapi takes in[size-1].
//
// RT-safe.
func (m *muxGenInst) update(period time.Duration, _ int64) {
	var s uint32
	for i, b := range m.selBit {
		if b.Get() {
			s += 1 << i
		}
	}
	s += m.selInt.Get()
	if m.suppress.Get() && s == 0 {
		return
	}
	if s != m.selection.Get() && m.timer.Get() < m.debounce.Get() {
		m.timer.Set(m.timer.Get() + uint32(int64(period)/1000))
		return
	}
	m.selection.Set(s)
	m.timer.Set(0)
	if s >= uint32(m.sp.size) {
		s = uint32(m.sp.size - 1)
	}
	switch m.sp.in {
	case muxGenBit:
		v := m.inBit[s].Get()
		switch m.sp.out {
		case muxGenBit:
			m.outBit.Set(v)
		case muxGenS32:
			m.outS32.Set(int32(muxGenB2U(v)))
		case muxGenU32:
			m.outU32.Set(muxGenB2U(v))
		case muxGenFloat:
			m.outFloat.Set(float64(muxGenB2U(v)))
		}
	case muxGenFloat:
		v := m.inFloat[s].Get()
		switch m.sp.out {
		case muxGenBit:
			m.outBit.Set(math.Abs(v) > muxGenEps)
		case muxGenFloat:
			m.outFloat.Set(v)
		case muxGenS32:
			m.outS32.Set(muxGenFloatS32(v))
		case muxGenU32:
			m.outU32.Set(muxGenFloatU32(v))
		}
	case muxGenS32:
		v := m.inS32[s].Get()
		switch m.sp.out {
		case muxGenBit:
			m.outBit.Set(v != 0)
		case muxGenS32:
			m.outS32.Set(v)
		case muxGenU32:
			m.outU32.Set(uint32(max(v, 0)))
		case muxGenFloat:
			m.outFloat.Set(float64(v))
		}
	case muxGenU32:
		v := m.inU32[s].Get()
		switch m.sp.out {
		case muxGenBit:
			m.outBit.Set(v != 0)
		case muxGenS32:
			m.outS32.Set(int32(min(v, math.MaxInt32)))
		case muxGenU32:
			m.outU32.Set(v)
		case muxGenFloat:
			m.outFloat.Set(float64(v))
		}
	}
}

// muxGenB2U is C's bool to integer: 1 or 0.
func muxGenB2U(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// muxGenFloatS32 is write_fp's float to s32: clamped, truncated toward
// zero; NaN is -2147483648 (x86-64 cvttsd2si).
func muxGenFloatS32(v float64) int32 {
	switch {
	case v > math.MaxInt32:
		return math.MaxInt32
	case v < math.MinInt32:
		return math.MinInt32
	case v != v:
		return math.MinInt32
	}
	return int32(v)
}

// muxGenFloatU32 is write_fp's float to u32: clamped, truncated toward
// zero; NaN is 0 (x86-64 gcc converts through a 64-bit cvttsd2si).
func muxGenFloatU32(v float64) uint32 {
	switch {
	case v > math.MaxUint32:
		return math.MaxUint32
	case v < 0, v != v:
		return 0
	}
	return uint32(v)
}
