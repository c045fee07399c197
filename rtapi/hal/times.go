package hal

import (
	"errors"
	"os"
	"slices"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

// Thread and function times as HAL pins and parameters, as LinuxCNC's
// hal_lib.c makes them (hal_export_funct, hal_create_thread, thread_task):
//
//	FUNCT.time            s32 OUT pin    the last call's time, ns
//	FUNCT.tmax            s32 RW param   the largest .time since it was last set (setp FUNCT.tmax 0)
//	FUNCT.tmax-increased  bit RO param   whether the last call raised .tmax
//	THREAD.time           s32 OUT pin    the last cycle's chain time, ns
//	THREAD.tmax           s32 RW param   the largest .time since it was last set
//	THREAD.threadbeat     s64 OUT pin    the cycles completed (Thread.Beat)
//
// A thread has no .tmax-increased: hal_create_thread makes none. A
// thread's items belong to the pseudo component "__THREAD", as in
// LinuxCNC; a function's to the component that exported it, or to the
// pseudo component "__hal" for HAL.Export. Times are nanoseconds on the
// flavor's clock, as rtapi_get_time gives them in LinuxCNC 2.7 and later
// (older versions counted CPU clocks), truncated to 32 bits as
// hal_set_si32 truncates them. The thread writes them after each call
// (a function's) or cycle (a thread's) with storeRelaxed, as Set does (a
// plain store on amd64, as LinuxCNC's; atomic elsewhere), so a reader
// sees each value whole as soon as it is made, and a setp of .tmax is
// seen at the next call. (Stats and the stats segment get a function's
// counters at each publication instead: Funct.Stats.) Where a name is refused (too long for
// NameLen, or taken by another pin or parameter) the thread or function
// works on without that item and a warning is logged; LinuxCNC would
// refuse the thread or the function instead.

// timeItems are a thread's or a function's timing items. Handles whose
// item could not be made point at private words.
type timeItems struct {
	time      S32
	tmax      S32
	increased Bit  // functions only
	beat      S64  // threads only
	wasUp     bool // what increased holds; the calling thread's only
}

// record stores one call's (or cycle's) time d and reports whether it
// raised .tmax (LinuxCNC's thread_task).
// RT-safe.
func (t *timeItems) record(d int64) (raised bool) {
	rt := int32(d) // hal_set_si32(runtime, end_time - start_time)
	// A plain store on amd64, as hal_set_si32's: an XCHG after every call
	// was about 3 ns of a call's cost in a chain (BenchmarkChainRatio).
	storeRelaxed(t.time.w.Load(), uint64(int64(rt)))
	if rt > t.tmax.Get() {
		t.tmax.Set(rt)
		return true
	}
	return false
}

// setIncreased stores .tmax-increased when it changes.
// RT-safe.
func (t *timeItems) setIncreased(up bool) {
	if up != t.wasUp {
		t.wasUp = up
		t.increased.Set(up)
	}
}

func privateTimes() timeItems {
	return timeItems{time: S32{dummy()}, tmax: S32{dummy()}, increased: Bit{dummy()}, beat: S64{dummy()}}
}

// threadTimes makes a thread's timing items and their pseudo component.
// Called with h.mu.
func (h *HAL) threadTimes(name string) timeItems {
	t := privateTimes()
	c, err := h.ownComp("__" + name)
	if err != nil {
		h.timesRefused(name, err)
		return t
	}
	h.ownPin(c, name+".time", TypeS32, Out, &t.time.w)
	h.ownParam(c, name+".tmax", TypeS32, RW, &t.tmax.w)
	h.ownPin(c, name+".threadbeat", TypeS64, Out, &t.beat.w)
	return t
}

// functTimes makes a function's timing items, owned by c, or by "__hal"
// when c is nil. Called with h.mu.
func (h *HAL) functTimes(c *Component, name string) timeItems {
	t := privateTimes()
	if c == nil {
		var err error
		if c, err = h.ownComp("__hal"); err != nil {
			h.timesRefused(name, err)
			return t
		}
	}
	h.ownPin(c, name+".time", TypeS32, Out, &t.time.w)
	h.ownParam(c, name+".tmax", TypeS32, RW, &t.tmax.w)
	h.ownParam(c, name+".tmax-increased", TypeBit, RO, &t.increased.w)
	return t
}

func (h *HAL) timesRefused(name string, err error) {
	h.log.Warn("hal: a thread's or function's time pin or parameter was not made; it runs without it",
		zap.String("name", name), zap.Error(err))
}

// ownComp returns the HAL's pseudo component name, making it ready if
// needed. Called with h.mu.
func (h *HAL) ownComp(name string) (*Component, error) {
	if c := h.comp(name); c != nil {
		if !h.ownComps[c] {
			return nil, errf("new component", "", "", rtapi.ErrInvalid, "a component named %q exists", name)
		}
		return c, nil
	}
	if err := names.Check("component", name); err != nil {
		return nil, errors.Join(err, rtapi.ErrInvalid)
	}
	index := slices.IndexFunc(h.comps, func(c *Component) bool { return c.removed }) // one unloadrt freed
	if index < 0 && len(h.comps) >= MaxComps {
		return nil, errf("new component", "", "", rtapi.ErrInvalid, "already %d components", MaxComps)
	}
	if index < 0 {
		index = len(h.comps)
		h.comps = append(h.comps, nil)
	}
	c := &Component{h: h, name: name, index: index, born: h.born, pid: os.Getpid(), ready: true, id: h.nextCompID(1)}
	h.born++
	h.data.access(func() {
		c.e = &h.data.l.Comps[c.index]
		atomic.StoreUint32(&c.e.ID, uint32(c.id))
		storeName(&c.e.Name, name)
		atomic.StoreInt64(&c.e.PID, int64(os.Getpid()))
		atomic.StoreUint32(&c.e.Ready, 1)
	})
	h.comps[index] = c
	if h.ownComps == nil {
		h.ownComps = map[*Component]bool{}
	}
	h.ownComps[c] = true
	h.data.access(func() { atomic.StoreInt64(&h.data.l.Header.NComps, int64(len(h.comps))) })
	return c, nil
}

// ownCheck is newItem's check for the HAL's own items. Called with h.mu.
func (h *HAL) ownCheck(name string, n, limit int) error {
	_, pinDup := h.pins[name]
	_, parDup := h.params[name]
	switch err := names.Check("pin", name); {
	case err != nil:
		return errors.Join(err, rtapi.ErrInvalid)
	case pinDup || parDup:
		return errf("new pin", "", "", rtapi.ErrInvalid, "a pin or parameter named %q exists", name)
	case n >= limit:
		return errf("new pin", "", "", rtapi.ErrInvalid, "%q: the tables are full", name)
	}
	return nil
}

// ownPin makes c's pin name and points *w at it. Called with h.mu.
func (h *HAL) ownPin(c *Component, name string, t Type, d Dir, w **word) {
	slot := freeSlot(h.pinList) // one unloadrt freed, else a new one
	if err := h.ownCheck(name, slot, MaxPins); err != nil {
		h.timesRefused(name, err)
		return
	}
	p := &pin{index: slot, name: name, typ: t, dir: d, comp: c}
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
	*w = p.ref
}

// ownParam makes c's parameter name and points *w at it. Called with h.mu.
func (h *HAL) ownParam(c *Component, name string, t Type, d ParamDir, w **word) {
	slot := freeSlot(h.parList) // one unloadrt freed, else a new one
	if err := h.ownCheck(name, slot, MaxParams); err != nil {
		h.timesRefused(name, err)
		return
	}
	p := &param{index: slot, name: name, typ: t, dir: d, comp: c}
	var own *uint64
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
	*w = p.ref
}

// resetMax zeroes .tmax, as setp NAME.tmax 0 does.
func (t *timeItems) resetMax(d *dataStore) {
	d.access(func() { t.tmax.Set(0) })
}
