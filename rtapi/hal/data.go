package hal

import (
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

// Component owns pins, parameters and functions (LinuxCNC's hal_init
// component). Its builder methods (Float, FloatParam, Export, ...) keep
// the first error and then do nothing; Ready returns that error. A handle
// returned after an error is usable but belongs to no pin. Its methods
// are set-up code, safe for concurrent use.
type Component struct {
	h        *HAL
	name     string
	index    int
	born     uint64 // h.born when made: a refused loadrt removes the later ones
	id       int    // show's Owner and ID (compid.go)
	e        *compEntry
	err      error
	ready    bool
	pid      int  // the process it belongs to
	user     bool // made by NewUserComponent
	exported bool // it exported a function: Remove refuses it
	removed  bool
	exit     []func() // OnExit's hooks; guarded by h.mu
}

// pin is the host's pin; ref points at its own word or its signal's.
type pin struct {
	ref   *word // a cell of dataStore.newRef's, which handles point at
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
	ref   *word // always at the parameter's own word; a newRef cell
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
	value *uint64 // its word in the values area, taken once under the data guard
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
	index := slices.IndexFunc(h.comps, func(c *Component) bool { return c.removed })
	if index < 0 && len(h.comps) >= MaxComps {
		return nil, errf(op, "", "", rtapi.ErrInvalid, "already %d components, the most one HAL holds", MaxComps)
	}
	if index < 0 {
		index = len(h.comps)
		h.comps = append(h.comps, nil)
	}
	c := &Component{h: h, name: name, index: index, born: h.born, pid: os.Getpid(), id: h.nextCompID(1)}
	h.born++
	h.data.access(func() {
		c.e = &h.data.l.Comps[c.index]
		atomic.StoreUint32(&c.e.Ready, 0)
		atomic.StoreUint32(&c.e.ID, uint32(c.id))
		storeName(&c.e.Name, name)
		atomic.StoreInt64(&c.e.PID, int64(os.Getpid()))
	})
	h.comps[index] = c
	h.data.access(func() { atomic.StoreInt64(&h.data.l.Header.NComps, int64(len(h.comps))) })
	return c, nil
}

// comp is the component named name, nil if none (or removed).
func (h *HAL) comp(name string) *Component {
	for _, c := range h.comps {
		if c.name == name && !c.removed {
			return c
		}
	}
	return nil
}

// Remove removes the component and its pins and parameters (LinuxCNC's
// hal_exit), unlinking the pins from their signals, which stay: what a
// user-space component's end does (package halctl). Its handles then
// point at private words, and its name is free again. A component that
// exported a function is ErrState; a second Remove ErrInvalid. Set-up
// code.
func (c *Component) Remove() error {
	const op = "remove component"
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkOpen(op, "", ""); err != nil {
		return err
	}
	switch {
	case c.removed:
		return errf(op, "", "", rtapi.ErrInvalid, "component %q was removed", c.name)
	case c.exported || h.ownComps[c]:
		return errf(op, "", "", rtapi.ErrState, "component %q has functions; it stays until the HAL closes", c.name)
	}
	h.dropAliases(map[*Component]bool{c: true}) // unload.go
	h.dropSafeStates(func(s safeState) bool { return s.comp == c })
	return h.removeComps(func(x *Component) bool { return x == c }, op)
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
	c.exportDone(c.h.export(name, fn, nil, c))
}

// ExportContext is Export for a ContextFunc (HAL.ExportContext).
func (c *Component) ExportContext(name string, fn ContextFunc) {
	if fn == nil {
		panic("hal: Component.ExportContext called with a nil ContextFunc")
	}
	if c.Err() != nil {
		return
	}
	c.exportDone(c.h.export(name, nil, fn, c))
}

func (c *Component) exportDone(_ *Funct, err error) {
	if err != nil {
		c.fail(err)
		return
	}
	c.h.mu.Lock()
	c.exported = true
	c.h.mu.Unlock()
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
	slot := freeSlot(h.pinList)
	if !c.newItem(op, "pin", name, slot, MaxPins) {
		return dummy()
	}
	p := &pin{index: slot, name: name, typ: t, dir: d, comp: c}
	h.beginChange()
	h.data.access(func() {
		p.e = &h.data.l.Pins[p.index]
		p.own = &h.data.l.Values.Pins[p.index]
		atomic.StoreUint64(p.own, 0)
		atomic.StoreUint32(&p.e.Signal, 0)
		storeName(&p.e.Name, name)
		storeMeta(&p.e.Comp, entryMeta{Comp: uint16(c.index), Type: uint8(t), Dir: uint8(d)})
	})
	p.ref = h.data.newRef(p.own)
	h.pins[name] = p
	h.pinList = putSlot(h.pinList, slot, p)
	h.data.access(func() { atomic.StoreInt64(&h.data.l.Header.NPins, int64(len(h.pinList))) })
	h.endChange()
	return p.ref
}

func (c *Component) newParam(name string, t Type, d ParamDir) *word {
	const op = "new param"
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	slot := freeSlot(h.parList)
	if !c.newItem(op, "parameter", name, slot, MaxParams) {
		return dummy()
	}
	p := &param{index: slot, name: name, typ: t, dir: d, comp: c}
	var own *uint64
	h.beginChange()
	h.data.access(func() {
		p.e = &h.data.l.Params[p.index]
		own = &h.data.l.Values.Params[p.index]
		atomic.StoreUint64(own, 0)
		storeName(&p.e.Name, name)
		storeMeta(&p.e.Comp, entryMeta{Comp: uint16(c.index), Type: uint8(t), Dir: uint8(d)})
	})
	p.ref = h.data.newRef(own)
	h.params[name] = p
	h.parList = putSlot(h.parList, slot, p)
	h.data.access(func() { atomic.StoreInt64(&h.data.l.Header.NParams, int64(len(h.parList))) })
	h.endChange()
	return p.ref
}

// newItem reports whether c may make a pin or parameter (kind) named
// name, unique among both (setp takes either), in slot n of max; it
// keeps the first failure in c.err. Called with h.mu.
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
func (c *Component) Float(name string, d Dir) Float {
	w := c.newPin(name, TypeFloat, d)
	return Float{w: w, own: w.Load()} // a new pin reads its own word
}

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
	return Float{w: c.newParam(name, TypeFloat, d)}
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
	h.data.access(func() {
		l := h.data.l
		gen := atomic.LoadUint64(&l.Header.Gen) | 1 // odd: a reader retries
		atomic.StoreUint64(&l.Header.Gen, gen)
		initDataHeader(l)
		for i, c := range h.comps {
			e := &l.Comps[i]
			if c.removed {
				storeName(&e.Name, "")
				atomic.StoreUint32(&e.Ready, 0)
				continue
			}
			storeName(&e.Name, c.name)
			atomic.StoreInt64(&e.PID, int64(c.pid))
			if c.ready {
				atomic.StoreUint32(&e.Ready, 1)
			}
		}
		for i, p := range h.pinList {
			e := &l.Pins[i]
			if p == nil {
				storeMeta(&e.Comp, entryMeta{})
				atomic.StoreUint32(&e.Signal, 0)
				continue
			}
			storeName(&e.Name, p.name)
			storeMeta(&e.Comp, entryMeta{Comp: uint16(p.comp.index), Type: uint8(p.typ), Dir: uint8(p.dir)})
			link := uint32(0)
			if p.sig != nil {
				link = uint32(p.sig.index + 1)
			}
			atomic.StoreUint32(&e.Signal, link)
		}
		for i, p := range h.parList {
			e := &l.Params[i]
			if p == nil {
				storeMeta(&e.Comp, entryMeta{})
				continue
			}
			storeName(&e.Name, p.name)
			storeMeta(&e.Comp, entryMeta{Comp: uint16(p.comp.index), Type: uint8(p.typ), Dir: uint8(p.dir)})
		}
		for i, s := range h.sigList {
			e := &l.Signals[i]
			info := uint64(0)
			if s != nil && h.sigs[s.name] == s {
				storeName(&e.Name, s.name)
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

// Slots. The pin, parameter and signal tables are slot tables: a deleted
// entry's slot is nil here and free in the segment (a zero entryMeta, a
// signal's Info without its live bit), and the next one made takes the
// lowest free slot. The header's counts are high-water marks. A slot is
// freed, and filled again, inside begin/endChange, words written one by
// one with atomics: a reader sees a whole entry, a free one, or an odd or
// changed Gen and reads again.

// freeSlot is the lowest free slot of list: a nil one, else len(list).
func freeSlot[T any](list []*T) int {
	for i, x := range list {
		if x == nil {
			return i
		}
	}
	return len(list)
}

// putSlot puts x in slot i of list, i at most len(list).
func putSlot[T any](list []*T, i int, x *T) []*T {
	if i == len(list) {
		return append(list, x)
	}
	list[i] = x
	return list
}

// entryMeta is a pin's or parameter's owner, type and direction: one
// 32-bit word of its entry, stored and loaded at once. Zero is a free slot.
type entryMeta struct {
	Comp uint16
	Type uint8
	Dir  uint8
}

// storeMeta stores m at p, the Comp field of a pinEntry or paramEntry,
// which starts its 4-byte-aligned word Comp, Type, Dir.
func storeMeta(p *uint16, m entryMeta) {
	atomic.StoreUint32((*uint32)(unsafe.Pointer(p)), *(*uint32)(unsafe.Pointer(&m)))
}

// loadMeta loads what storeMeta stored.
func loadMeta(p *uint16) entryMeta {
	v := atomic.LoadUint32((*uint32)(unsafe.Pointer(p)))
	return *(*entryMeta)(unsafe.Pointer(&v))
}

// storeName writes name into an entry's 8-byte-aligned name, zero-padded,
// a word at a time.
func storeName(b *[NameLen]byte, name string) {
	var buf [NameLen]byte
	copy(buf[:NameLen-1], name)
	w := (*[NameLen / 8]uint64)(unsafe.Pointer(b))
	for i := range w {
		atomic.StoreUint64(&w[i], binary.NativeEndian.Uint64(buf[i*8:]))
	}
}

// loadName reads what storeName wrote, a word at a time.
func loadName(b *[NameLen]byte) (out [NameLen]byte) {
	w := (*[NameLen / 8]uint64)(unsafe.Pointer(b))
	for i := range w {
		binary.NativeEndian.PutUint64(out[i*8:], atomic.LoadUint64(&w[i]))
	}
	return out
}

// removeComps deletes the components gone says, with their pins and
// parameters, and frees their slots: pins are unlinked first (their
// signals stay). Handles the components' code still holds point at
// private words afterwards. Called with h.mu.
func (h *HAL) removeComps(gone func(*Component) bool, op string) error {
	if !slices.ContainsFunc(h.comps, func(c *Component) bool { return !c.removed && gone(c) }) {
		return nil
	}
	h.runExit(gone)
	h.beginChange()
	for _, p := range h.pinList {
		if p != nil && gone(p.comp) {
			h.unlink(p)
		}
	}
	h.endChange()
	if err := h.settle(op); err != nil {
		return err
	}
	h.beginChange()
	for i, p := range h.pinList {
		if p == nil || !gone(p.comp) {
			continue
		}
		h.data.access(func() { storeMeta(&p.e.Comp, entryMeta{}) })
		p.ref.Store(new(uint64))
		delete(h.pins, p.name)
		h.pinList[i] = nil
	}
	for i, p := range h.parList {
		if p == nil || !gone(p.comp) {
			continue
		}
		h.data.access(func() { storeMeta(&p.e.Comp, entryMeta{}) })
		p.ref.Store(new(uint64))
		delete(h.params, p.name)
		h.parList[i] = nil
	}
	for _, c := range h.comps {
		if c.removed || !gone(c) {
			continue
		}
		c.removed = true
		c.err = errf(op, "", "", rtapi.ErrState, "component %q was removed", c.name)
		h.data.access(func() {
			atomic.StoreUint32(&c.e.Ready, 0)
			storeName(&c.e.Name, "")
		})
	}
	for len(h.comps) > 0 && h.comps[len(h.comps)-1].removed {
		h.comps = h.comps[:len(h.comps)-1]
	}
	h.data.access(func() { atomic.StoreInt64(&h.data.l.Header.NComps, int64(len(h.comps))) })
	h.endChange()
	return nil
}
