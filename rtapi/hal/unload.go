package hal

import (
	"cmp"
	"errors"
	"slices"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// module is what one accepted loadrt made (LinuxCNC's loaded module):
// unloadrt of its name removes all of it.
type module struct {
	name    string
	comps   []*Component // its components, with its threads' pseudo components
	functs  []*Funct
	threads []*Thread
	segs    []*shm.Segment
	// safe are the safe states its loadrt registered: seq in (from, to].
	safeFrom, safeTo uint64
}

// recordModule notes what the loadrt of name made since m. Called with h.mu.
func (h *HAL) recordModule(name string, m loadMark) {
	mod := &module{name: name,
		functs:   slices.Clone(h.order[m.functs:]),
		threads:  slices.Clone(h.threads[m.threads:]),
		segs:     slices.Clone(h.segs[m.segs:]),
		safeFrom: m.safe, safeTo: h.safeSeq,
	}
	own := map[string]bool{}
	for _, th := range mod.threads {
		own["__"+th.name] = true
	}
	for _, c := range h.comps {
		if !c.removed && c.born >= m.comps && (!h.ownComps[c] || own[c.name]) {
			mod.comps = append(mod.comps, c)
		}
	}
	h.modules = append(h.modules, mod)
}

// UnloadRT removes component name and everything else the loadrt that
// made it made (halcmd's unloadrt; LinuxCNC's rtapi_app unload runs the
// module's rtapi_app_exit, then hal_exit). name "all" unloads every
// loaded module, newest first, and returns their errors joined.
//
// In order: its functions leave their threads, and UnloadRT waits until
// no thread can call them (up to Options.StopTimeout, else ErrTimeout
// and nothing more is removed); the safe states its loadrt registered,
// and safep's on its pins, are removed; its threads stop and are
// deleted, other functions on them being left on no thread; its
// components' OnExit hooks run; its pins lose their aliases and leave
// their signals, which stay; its pins, parameters, functions,
// components and segments are deleted and their slots freed for the
// next loadrt.
//
// A name no component has is ErrNotExist ("component 'NAME' is not
// loaded"); a user-space component's is ErrInvalid ("is not a realtime
// module"); a component made by Go code, not by loadrt, is ErrInvalid
// too (LinuxCNC's rtapi_app "not loaded"). As in LinuxCNC, halcmd's lock
// does not refuse it. Set-up code.
func (h *HAL) UnloadRT(name string) error {
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	if err := h.lockOpen("unloadrt"); err != nil {
		return err
	}
	defer h.mu.Unlock()
	if name == "all" {
		return h.unloadAll()
	}
	c := h.comp(name)
	switch {
	case c == nil:
		return errf("unloadrt", "", "", rtapi.ErrNotExist, "component '%s' is not loaded", name)
	case c.user:
		return errf("unloadrt", "", "", rtapi.ErrInvalid, "component '%s' is not a realtime module", name)
	}
	i := slices.IndexFunc(h.modules, func(m *module) bool { return slices.Contains(m.comps, c) })
	if i < 0 {
		return errf("unloadrt", "", "", rtapi.ErrInvalid, "unloadrt failed on '%s': %s: not loaded (it was not made by loadrt)", name, name)
	}
	return h.unloadModule(i)
}

// unloadAll is "unloadrt all": every module, newest first. Called with
// h.mu and h.loadMu.
func (h *HAL) unloadAll() error {
	order := slices.Clone(h.modules)
	slices.SortStableFunc(order, func(a, b *module) int { return -cmp.Compare(newest(a), newest(b)) })
	var errs []error
	for _, m := range order {
		if i := slices.Index(h.modules, m); i >= 0 {
			if err := h.unloadModule(i); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// newest is when the module's newest component was made.
func newest(m *module) uint64 {
	var b uint64
	for _, c := range m.comps {
		b = max(b, c.born+1)
	}
	return b
}

// unloadModule removes h.modules[i] and all it made. Called with h.mu
// and h.loadMu.
func (h *HAL) unloadModule(i int) error {
	const op = "unloadrt"
	m := h.modules[i]
	if n := len(m.threads); n > 0 && !slices.Equal(h.threads[max(0, len(h.threads)-n):], m.threads) {
		return errf(op, "", "", rtapi.ErrState, "%s: threads were made after its own; unload what made them first", m.name)
	}
	// The functions leave their threads before anything they use goes.
	if err := h.unchainFuncts(m.functs); err != nil {
		return &Error{Op: op, Err: err}
	}
	gone := map[*Component]bool{}
	for _, c := range m.comps {
		gone[c] = true
	}
	// Then its safe states (and safep's on its pins): none runs after
	// its exit hook released what they drive.
	h.dropSafeStates(func(s safeState) bool {
		return s.seq > m.safeFrom && s.seq <= m.safeTo || gone[s.comp]
	})
	var errs []error
	if len(m.threads) > 0 {
		errs = append(errs, h.deleteThreads(len(h.threads)-len(m.threads)))
	}
	h.dropAliases(gone)
	if err := h.removeComps(func(c *Component) bool { return gone[c] }, op); err != nil {
		return errors.Join(append(errs, err)...)
	}
	for c := range gone {
		delete(h.ownComps, c)
	}
	h.dropFuncts(m.functs)
	for _, seg := range m.segs {
		errs = append(errs, seg.Delete())
		h.segs = slices.DeleteFunc(h.segs, func(s *shm.Segment) bool { return s == seg })
	}
	h.modules = slices.Delete(h.modules, i, i+1)
	h.loaded = slices.Delete(h.loaded, i, i+1) // appended with h.modules, in step
	return errors.Join(errs...)
}

// unchainFuncts takes fs off their threads and waits until no thread can
// call them, up to Options.StopTimeout. Called with h.mu.
func (h *HAL) unchainFuncts(fs []*Funct) error {
	for _, f := range fs {
		f.settle()
		th := f.thread
		if th == nil {
			continue
		}
		if f.removing == 0 {
			old := th.chain.Load().functs
			k := slices.Index(old, f)
			f.removing = th.swap(slices.Delete(slices.Clone(old), k, k+1))
		}
		if th.waitPast(f.removing, h.opts.StopTimeout) != nil {
			return errf("unloadrt", th.name, f.name, rtapi.ErrTimeout,
				"the thread did not finish its cycle within %v: the function's call is still running; "+
					"it is off the chain and nothing was unloaded", h.opts.StopTimeout)
		}
		f.released()
	}
	return nil
}

// dropFuncts deletes fs, on no thread by then, freeing their names and
// stats slots (cleared: a viewer reads an empty name there until a new
// function takes the slot). Called with h.mu.
func (h *HAL) dropFuncts(fs []*Funct) {
	if len(fs) == 0 {
		return
	}
	drop := map[*Funct]bool{}
	for _, f := range fs {
		drop[f] = true
		delete(h.functs, f.name)
		if h.pub != nil {
			h.pub.clearFunct(f.index)
		}
	}
	// The exported count is not lowered: a thread's published chain may
	// name a freed slot until its next publication, and a viewer checks
	// the chain against the count.
	h.order = slices.DeleteFunc(h.order, func(f *Funct) bool { return drop[f] })
}

// freeFunctIndex is the lowest stats slot no exported function holds.
// Called with h.mu.
func (h *HAL) freeFunctIndex() int {
	var used [MaxExported]bool
	for _, f := range h.order {
		used[f.index] = true
	}
	for i, u := range used {
		if !u {
			return i
		}
	}
	return len(used)
}

// deleteThreads stops and deletes h.threads[from:], leaving the
// functions on them on no thread. Called with h.mu.
func (h *HAL) deleteThreads(from int) error {
	var errs []error
	del := h.threads[from:]
	if h.running {
		for _, th := range del {
			th.task.Stop()
		}
		for _, th := range del {
			if err := th.wait(h.opts.StopTimeout); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, th := range del {
		for _, f := range th.chain.Load().functs {
			f.thread, f.removing = nil, 0
		}
		if f := th.task; f != nil {
			if err := f.Delete(); err != nil && !errors.Is(err, rtapi.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	h.threads = slices.Clone(h.threads[:from])
	if len(h.threads) == 0 {
		h.base = 0
		h.running = false
	}
	h.assignPriorities()
	if h.pub != nil {
		h.pub.setThreads(len(h.threads), h.base)
	}
	return errors.Join(errs...)
}

// unloadVerb runs halcmd's unloadrt NAME|all, or the host's part of
// unload NAME|all: unloadrt for a realtime component; a user-space one is
// left to unloadusr, which halcmd and halrun run (package usercomp).
func (h *HAL) unloadVerb(verb, name string) error {
	if verb == "unload" && name != "all" {
		h.mu.Lock()
		c := h.comp(name)
		user := c != nil && c.user
		h.mu.Unlock()
		if user {
			return nil // its process is sent SIGTERM by the caller's unloadusr
		}
	}
	return h.UnloadRT(name)
}

// dropSafeStates removes the safe states drop says from every thread.
// A run of them under way ends first (safeMu), so none runs after.
// Called with h.mu.
func (h *HAL) dropSafeStates(drop func(safeState) bool) {
	for _, th := range h.threads {
		p := th.safe.Load()
		if p == nil || !slices.ContainsFunc(*p, drop) {
			continue
		}
		list := slices.DeleteFunc(slices.Clone(*p), drop)
		th.safeMu.Lock()
		th.safe.Store(&list)
		th.safeMu.Unlock()
	}
}

// dropAliases removes the aliases of the pins and parameters of the
// components gone (hal_exit frees a pin's alias with it). Called with h.mu.
func (h *HAL) dropAliases(gone map[*Component]bool) {
	drop := func(name string) {
		if a, ok := h.aliasOf[name]; ok {
			delete(h.aliases, a)
			delete(h.aliasOf, name)
		}
	}
	for _, p := range h.pinList {
		if p != nil && gone[p.comp] {
			drop(p.name)
		}
	}
	for _, p := range h.parList {
		if p != nil && gone[p.comp] {
			drop(p.name)
		}
	}
}
