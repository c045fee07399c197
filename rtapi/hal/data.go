package hal

import (
	"errors"
	"os"
	"sync/atomic"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

// Component owns pins, parameters and functions (LinuxCNC's hal_init
// component). Its builder methods (Float, FloatParam, Export, ...) keep
// the first error and then do nothing; Ready returns that error. A handle
// returned after an error is usable but belongs to no pin. Its methods
// are set-up code, safe for concurrent use.
type Component struct {
	h     *HAL
	name  string
	index int
	e     *compEntry
	err   error
	ready bool
}

// pin is the host's pin; ref points at its own word or its signal's.
type pin struct {
	ref   word
	own   *uint64
	e     *pinEntry
	index int
	name  string
	typ   Type
	dir   Dir
	comp  *Component
	sig   *Signal // guarded by h.mu
}

type param struct {
	ref   word // always the parameter's own word
	e     *paramEntry
	index int
	name  string
	typ   Type
	dir   ParamDir
	comp  *Component
}

// Signal connects pins of one type (LinuxCNC's hal_sig); see HAL.Link.
type Signal struct {
	name  string
	index int
	e     *sigEntry
	value *uint64 // &e.Value, taken once under the data guard
	typ   Type
	pins  []*pin // linked, in link order; guarded by h.mu
}

// NewComponent makes a component (hal_init). The name is 1 to NameLen-1
// bytes, no space or control character, unique among components.
func (h *HAL) NewComponent(name string) (*Component, error) {
	const op = "new component"
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkOpen(op, "", ""); err != nil {
		return nil, err
	}
	if err := names.Check("component", name); err != nil {
		return nil, &Error{Op: op, Err: errors.Join(err, rtapi.ErrInvalid)}
	}
	if h.comp(name) != nil {
		return nil, errf(op, "", "", rtapi.ErrInvalid, "a component named %q exists", name)
	}
	if len(h.comps) >= MaxComps {
		return nil, errf(op, "", "", rtapi.ErrInvalid, "already %d components, the most one HAL holds", MaxComps)
	}
	c := &Component{h: h, name: name, index: len(h.comps)}
	h.data.access(func() {
		c.e = &h.data.l.Comps[c.index]
		copy(c.e.Name[:], name)
		c.e.PID = int64(os.Getpid())
	})
	h.comps = append(h.comps, c)
	h.data.access(func() { atomic.StoreInt64(&h.data.l.Header.NComps, int64(len(h.comps))) })
	return c, nil
}

func (h *HAL) comp(name string) *Component {
	for _, c := range h.comps {
		if c.name == name {
			return c
		}
	}
	return nil
}

// Name is the component's name.
func (c *Component) Name() string { return c.name }

// Err is the first error of the component's builder calls.
func (c *Component) Err() error {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.err
}

// Ready marks the component complete (hal_ready) and returns the first
// error of its builder calls. Later pins or parameters are ErrState.
func (c *Component) Ready() error {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	c.ready = true
	c.h.data.access(func() { atomic.StoreUint32(&c.e.Ready, 1) })
	return nil
}

// Export exports fn under its full name, e.g. "pid.0.do-pid-calcs"
// (hal_export_funct, HAL.Export).
func (c *Component) Export(name string, fn Func) {
	if fn == nil {
		panic("hal: Component.Export called with a nil Func")
	}
	if c.Err() != nil {
		return
	}
	if _, err := c.h.export(name, fn, nil, c); err != nil {
		c.fail(err)
	}
}

// ExportContext is Export for a ContextFunc (HAL.ExportContext).
func (c *Component) ExportContext(name string, fn ContextFunc) {
	if fn == nil {
		panic("hal: Component.ExportContext called with a nil ContextFunc")
	}
	if c.Err() != nil {
		return
	}
	if _, err := c.h.export(name, nil, fn, c); err != nil {
		c.fail(err)
	}
}

func (c *Component) fail(err error) {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
}

func dummy() *word {
	w := new(word)
	w.Store(new(uint64))
	return w
}

// newPin makes a pin and returns where its value lives.
func (c *Component) newPin(name string, t Type, d Dir) *word {
	const op = "new pin"
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.newItem(op, "pin", name, len(h.pinList), MaxPins) {
		return dummy()
	}
	p := &pin{index: len(h.pinList), name: name, typ: t, dir: d, comp: c}
	h.data.access(func() {
		p.e = &h.data.l.Pins[p.index]
		copy(p.e.Name[:], name)
		p.e.Comp, p.e.Type, p.e.Dir = uint16(c.index), uint8(t), uint8(d)
		p.own = &p.e.Value
	})
	p.ref.Store(p.own)
	h.pins[name] = p
	h.pinList = append(h.pinList, p)
	h.data.access(func() { atomic.StoreInt64(&h.data.l.Header.NPins, int64(len(h.pinList))) })
	return &p.ref
}

func (c *Component) newParam(name string, t Type, d ParamDir) *word {
	const op = "new param"
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.newItem(op, "parameter", name, len(h.parList), MaxParams) {
		return dummy()
	}
	p := &param{index: len(h.parList), name: name, typ: t, dir: d, comp: c}
	var own *uint64
	h.data.access(func() {
		p.e = &h.data.l.Params[p.index]
		copy(p.e.Name[:], name)
		p.e.Comp, p.e.Type, p.e.Dir = uint16(c.index), uint8(t), uint8(d)
		own = &p.e.Value
	})
	p.ref.Store(own)
	h.params[name] = p
	h.parList = append(h.parList, p)
	h.data.access(func() { atomic.StoreInt64(&h.data.l.Header.NParams, int64(len(h.parList))) })
	return &p.ref
}

// newItem reports whether c may make a pin or parameter (kind) named
// name, unique among both (setp takes either), with n of max entries
// used; it keeps the first failure in c.err. Called with h.mu.
func (c *Component) newItem(op, kind, name string, n, max int) bool {
	h := c.h
	if c.err != nil {
		return false
	}
	_, pinDup := h.pins[name]
	_, parDup := h.params[name]
	nameErr := names.Check("pin", name)
	switch err := h.checkOpen(op, "", ""); {
	case err != nil:
		c.err = err
	case c.ready:
		c.err = errf(op, "", "", rtapi.ErrState, "%q: component %q is ready, it makes no more pins or parameters", name, c.name)
	case nameErr != nil:
		c.err = &Error{Op: op, Err: errors.Join(nameErr, rtapi.ErrInvalid)}
	case pinDup:
		c.err = errf(op, "", "", rtapi.ErrInvalid, "a pin named %q exists", name)
	case parDup:
		c.err = errf(op, "", "", rtapi.ErrInvalid, "a parameter named %q exists", name)
	case n >= max:
		c.err = errf(op, "", "", rtapi.ErrInvalid, "%s %q: already %d %ss, the most one HAL holds", kind, name, max, kind)
	}
	return c.err == nil
}

// Pins: hal_pin_*_new. name is the full name ("pid.0.command").

// Bit makes a bit pin.
func (c *Component) Bit(name string, d Dir) Bit { return Bit{c.newPin(name, TypeBit, d)} }

// Float makes a float pin.
func (c *Component) Float(name string, d Dir) Float { return Float{c.newPin(name, TypeFloat, d)} }

// S32 makes an s32 pin.
func (c *Component) S32(name string, d Dir) S32 { return S32{c.newPin(name, TypeS32, d)} }

// U32 makes a u32 pin.
func (c *Component) U32(name string, d Dir) U32 { return U32{c.newPin(name, TypeU32, d)} }

// S64 makes an s64 pin.
func (c *Component) S64(name string, d Dir) S64 { return S64{c.newPin(name, TypeS64, d)} }

// U64 makes a u64 pin.
func (c *Component) U64(name string, d Dir) U64 { return U64{c.newPin(name, TypeU64, d)} }

// Parameters: hal_param_*_new.

// BitParam makes a bit parameter.
func (c *Component) BitParam(name string, d ParamDir) Bit { return Bit{c.newParam(name, TypeBit, d)} }

// FloatParam makes a float parameter.
func (c *Component) FloatParam(name string, d ParamDir) Float {
	return Float{c.newParam(name, TypeFloat, d)}
}

// S32Param makes an s32 parameter.
func (c *Component) S32Param(name string, d ParamDir) S32 { return S32{c.newParam(name, TypeS32, d)} }

// U32Param makes a u32 parameter.
func (c *Component) U32Param(name string, d ParamDir) U32 { return U32{c.newParam(name, TypeU32, d)} }

// S64Param makes an s64 parameter.
func (c *Component) S64Param(name string, d ParamDir) S64 { return S64{c.newParam(name, TypeS64, d)} }

// U64Param makes a u64 parameter.
func (c *Component) U64Param(name string, d ParamDir) U64 { return U64{c.newParam(name, TypeU64, d)} }

// DataSegment is the data segment's POSIX name ("" without DataKey).
func (h *HAL) DataSegment() string { return h.data.name() }

// repairData rewrites names and links from the host's model once the data
// segment was lost (DataErr), for the other processes that read them
// (Show and Save read the host's memory).
// Values are left alone: the threads' are the only ones. Called with
// h.mu; it runs once.
func (h *HAL) repairData() {
	if h.dataRepaired || h.data.err() == nil {
		return
	}
	h.dataRepaired = true
	pid := int64(os.Getpid())
	h.data.access(func() {
		l := h.data.l
		gen := atomic.LoadUint64(&l.Header.Gen) | 1 // odd: a reader retries
		atomic.StoreUint64(&l.Header.Gen, gen)
		initDataHeader(l)
		for i, c := range h.comps {
			e := &l.Comps[i]
			e.Name = nameBuf(c.name)
			e.PID = pid
			if c.ready {
				atomic.StoreUint32(&e.Ready, 1)
			}
		}
		for i, p := range h.pinList {
			e := &l.Pins[i]
			e.Name = nameBuf(p.name)
			e.Comp, e.Type, e.Dir = uint16(p.comp.index), uint8(p.typ), uint8(p.dir)
			link := uint32(0)
			if p.sig != nil {
				link = uint32(p.sig.index + 1)
			}
			atomic.StoreUint32(&e.Signal, link)
		}
		for i, p := range h.parList {
			e := &l.Params[i]
			e.Name = nameBuf(p.name)
			e.Comp, e.Type, e.Dir = uint16(p.comp.index), uint8(p.typ), uint8(p.dir)
		}
		for i, s := range h.sigList {
			e := &l.Signals[i]
			e.Name = nameBuf(s.name)
			info := uint64(0)
			if h.sigs[s.name] == s {
				_, w, r, b := s.counts()
				info = packSigInfo(s.typ, true, w, r, b)
			}
			atomic.StoreUint64(&e.Info, info)
		}
		atomic.StoreInt64(&l.Header.NComps, int64(len(h.comps)))
		atomic.StoreInt64(&l.Header.NPins, int64(len(h.pinList)))
		atomic.StoreInt64(&l.Header.NParams, int64(len(h.parList)))
		atomic.StoreInt64(&l.Header.NSignals, int64(len(h.sigList)))
		atomic.StoreUint64(&l.Header.Gen, gen+1)
	})
}

// nameBuf is name as a table entry holds it, zero-padded.
func nameBuf(name string) (b [NameLen]byte) {
	copy(b[:], name)
	return b
}
