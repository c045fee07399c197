package hal

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

// How links change while threads run: HACKING.md, "The HAL's link gate".

// NewSignal makes a signal of type t (halcmd newsig).
func (h *HAL) NewSignal(name string, t Type) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.newSignal(name, t)
	return err
}

func (h *HAL) newSignal(name string, t Type) (*Signal, error) {
	const op = "newsig"
	if err := h.checkOpen(op, "", ""); err != nil {
		return nil, err
	}
	if err := names.Check("signal", name); err != nil {
		return nil, &Error{Op: op, Err: errors.Join(err, rtapi.ErrInvalid)}
	}
	if !t.valid() {
		return nil, errf(op, "", "", rtapi.ErrInvalid, "signal %q: bad type %v", name, t)
	}
	if _, dup := h.sigs[name]; dup {
		return nil, errf(op, "", "", rtapi.ErrInvalid, "a signal named %q exists", name)
	}
	slot := freeSlot(h.sigList)
	if slot >= MaxSignals {
		return nil, errf(op, "", "", rtapi.ErrInvalid, "signal %q: already %d signals, the most one HAL holds", name, MaxSignals)
	}
	s := &Signal{name: name, index: slot, typ: t}
	h.beginChange()
	h.data.access(func() {
		s.e = &h.data.l.Signals[s.index]
		atomic.StoreUint64(&s.e.Info, 0)
		storeName(&s.e.Name, name)
		s.value = &h.data.l.Values.Signals[s.index]
		atomic.StoreUint64(s.value, 0)
	})
	h.publish(s)
	h.sigs[name] = s
	h.sigList = putSlot(h.sigList, slot, s)
	h.data.access(func() { atomic.StoreInt64(&h.data.l.Header.NSignals, int64(len(h.sigList))) })
	h.endChange()
	return s, nil
}

func (s *Signal) counts() (writer *pin, writers, readers, bidirs int) {
	for _, p := range s.pins {
		switch p.dir {
		case Out:
			writers++
			writer = p
		case In:
			readers++
		case IO:
			bidirs++
		}
	}
	return
}

// publish writes the signal's type and pin counts for readers.
func (h *HAL) publish(s *Signal) {
	_, w, r, b := s.counts()
	h.data.access(func() { atomic.StoreUint64(&s.e.Info, packSigInfo(s.typ, true, w, r, b)) })
}

// DeleteSignal unlinks every pin of the signal and deletes it (halcmd
// delsig). Each pin keeps the signal's last value as its own. The
// signal's slot is free for the next once no thread can read it.
func (h *HAL) DeleteSignal(name string) error {
	const op = "delsig"
	if err := h.lockOpen(op); err != nil {
		return err
	}
	defer h.mu.Unlock()
	s, ok := h.sigs[name]
	if !ok {
		return errf(op, "", "", rtapi.ErrInvalid, "signal %q does not exist", name)
	}
	h.beginChange()
	for _, p := range slices.Clone(s.pins) {
		h.unlink(p)
	}
	delete(h.sigs, name)
	h.data.access(func() { atomic.StoreUint64(&s.e.Info, 0) })
	h.endChange()
	if err := h.settle(op); err != nil {
		return err // a thread may still be in a cycle that reads it: keep the slot
	}
	h.sigList[s.index] = nil
	return nil
}

// Link links a pin to a signal (hal_link, halcmd linkps); a pin already on
// it is left alone. Types must match; a signal takes at most one Out pin,
// and not both an Out pin and IO pins; errors name both pins. The first
// pin linked gives the signal its value.
func (h *HAL) Link(pinName, signal string) error {
	const op = "link"
	if err := h.lockOpen(op); err != nil {
		return err
	}
	defer h.mu.Unlock()
	p, s, err := h.pinAndSignal(op, pinName, signal)
	if err != nil {
		return err
	}
	if err := h.checkLink(op, p, s, nil); err != nil {
		return err
	}
	h.beginChange()
	h.link(p, s)
	h.endChange()
	return h.settle(op)
}

func (h *HAL) pinAndSignal(op, pinName, signal string) (*pin, *Signal, error) {
	p, ok := h.pins[pinName]
	if !ok {
		return nil, nil, errf(op, "", "", rtapi.ErrInvalid, "pin %q does not exist", pinName)
	}
	s, ok := h.sigs[signal]
	if !ok {
		return nil, nil, errf(op, "", "", rtapi.ErrInvalid, "signal %q does not exist", signal)
	}
	return p, s, nil
}

// checkLink checks that p may join s, given the pins also being added
// with it (a net checks them all before it links any). Called with h.mu.
func (h *HAL) checkLink(op string, p *pin, s *Signal, adding []*pin) error {
	if p.sig == s {
		return nil
	}
	if p.sig != nil {
		return errf(op, "", "", rtapi.ErrInvalid, "pin %q is linked to signal %q, cannot link it to %q (unlinkp it first)",
			p.name, p.sig.name, s.name)
	}
	all := append(slices.Clone(s.pins), adding...)
	if p.typ != s.typ {
		other := ""
		if len(all) > 0 {
			other = fmt.Sprintf(" of pin %q", all[0].name)
		}
		return errf(op, "", "", rtapi.ErrInvalid, "type mismatch: pin %q is %v, signal %q is %v%s",
			p.name, p.typ, s.name, s.typ, other)
	}
	for _, q := range all {
		if q == p {
			continue
		}
		switch {
		case p.dir == Out && q.dir == Out:
			return errf(op, "", "", rtapi.ErrInvalid, "signal %q already has OUT pin %q, cannot add OUT pin %q", s.name, q.name, p.name)
		case p.dir == IO && q.dir == Out:
			return errf(op, "", "", rtapi.ErrInvalid, "signal %q has OUT pin %q, cannot add I/O pin %q", s.name, q.name, p.name)
		case p.dir == Out && q.dir == IO:
			return errf(op, "", "", rtapi.ErrInvalid, "signal %q has I/O pin %q, cannot add OUT pin %q", s.name, q.name, p.name)
		}
	}
	return nil
}

// link points p at s. The pin's own value becomes the signal's when no
// OUT or I/O pin is on it and p is not an In pin joining readers
// (hal_link). Called with h.mu inside begin/endChange.
func (h *HAL) link(p *pin, s *Signal) {
	if p.sig == s {
		return
	}
	if _, writers, readers, bidirs := s.counts(); writers == 0 && bidirs == 0 && (p.dir != In || readers == 0) {
		h.data.access(func() { atomic.StoreUint64(s.value, atomic.LoadUint64(p.own)) })
	}
	p.sig = s
	s.pins = append(s.pins, p)
	h.setRef(p, s.value)
	h.data.access(func() { atomic.StoreUint32(&p.e.Signal, uint32(s.index+1)) })
	h.publish(s)
}

// unlink points p back at its own word, which takes the signal's value.
func (h *HAL) unlink(p *pin) {
	s := p.sig
	if s == nil {
		return
	}
	h.data.access(func() { atomic.StoreUint64(p.own, atomic.LoadUint64(s.value)) })
	h.setRef(p, p.own)
	p.sig = nil
	s.pins = slices.DeleteFunc(s.pins, func(q *pin) bool { return q == p })
	h.data.access(func() { atomic.StoreUint32(&p.e.Signal, 0) })
	h.publish(s)
}

// Unlink unlinks a pin from its signal (hal_unlink, halcmd unlinkp); the
// pin keeps the signal's value as its own. An unlinked pin is left alone.
func (h *HAL) Unlink(pinName string) error {
	const op = "unlinkp"
	if err := h.lockOpen(op); err != nil {
		return err
	}
	defer h.mu.Unlock()
	p, ok := h.pins[pinName]
	if !ok {
		return errf(op, "", "", rtapi.ErrInvalid, "pin %q does not exist", pinName)
	}
	h.beginChange()
	h.unlink(p)
	h.endChange()
	return h.settle(op)
}

// Net links pins to a signal, making the signal with the first pin's type
// if it does not exist (halcmd net). Every pin is checked before any is
// linked: a refused net changes nothing. A pin given twice is linked
// once. A signal named as a pin is refused, as halcmd refuses it: it is
// the slip of leaving out the signal name.
func (h *HAL) Net(signal string, pins ...string) error {
	const op = "net"
	if err := h.lockOpen(op); err != nil {
		return err
	}
	defer h.mu.Unlock()
	if len(pins) == 0 {
		return errf(op, "", "", rtapi.ErrInvalid, "net %q: no pins given", signal)
	}
	ps := make([]*pin, 0, len(pins))
	for _, name := range pins {
		p, ok := h.pins[name]
		if !ok {
			if _, isSig := h.sigs[name]; isSig {
				return errf(op, "", "", rtapi.ErrInvalid, "net %q: %q is a signal, not a pin", signal, name)
			}
			return errf(op, "", "", rtapi.ErrInvalid, "net %q: pin %q does not exist", signal, name)
		}
		if slices.Contains(ps, p) {
			if p.dir == Out && p.sig == nil {
				return errf(op, "", "", rtapi.ErrInvalid, "signal %q already has OUT pin %q, cannot add OUT pin %q", signal, name, name)
			}
			continue // halcmd links it once
		}
		ps = append(ps, p)
	}
	s, exists := h.sigs[signal]
	if !exists {
		s = &Signal{name: signal, typ: ps[0].typ} // checked here, made below
	}
	for i, p := range ps {
		if err := h.checkLink(op, p, s, ps[:i]); err != nil {
			return err
		}
	}
	if _, isPin := h.pins[signal]; isPin {
		return errf(op, "", "", rtapi.ErrInvalid, "Signal name '%s' must not be the same as a pin.  Did you omit the signal name?", signal)
	}
	if !exists {
		if err := names.Check("signal", signal); err != nil {
			return &Error{Op: op, Err: errors.Join(err, rtapi.ErrInvalid)}
		}
		var err error
		if s, err = h.newSignal(signal, ps[0].typ); err != nil {
			return err
		}
	}
	h.beginChange()
	for _, p := range ps {
		h.link(p, s)
	}
	h.endChange()
	return h.settle(op)
}

// beginChange and endChange keep the data segment's Gen odd during a change.
func (h *HAL) beginChange() { h.data.access(func() { atomic.AddUint64(&h.data.l.Header.Gen, 1) }) }
func (h *HAL) endChange()   { h.data.access(func() { atomic.AddUint64(&h.data.l.Header.Gen, 1) }) }

// settle applies the change's links between cycles (commitLinks), then
// returns once every running thread has left the cycle it was in (each
// gets its chain anew; waitPast waits out the old one). Called with h.mu.
func (h *HAL) settle(op string) error {
	if err := h.commitLinks(op); err != nil {
		return err
	}
	if !h.running {
		return nil
	}
	var errs []error
	for _, th := range h.threads {
		old := th.swap(th.chain.Load().functs)
		if err := th.waitPast(old, h.opts.StopTimeout); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", op, err))
		}
	}
	return errors.Join(errs...)
}

// SetP parses value (ParseValue) and stores it atomically into a
// parameter, or a pin no signal drives (halcmd setp). An RO parameter, an
// Out pin and a linked pin are refused.
func (h *HAL) SetP(name, value string) error {
	const op = "setp"
	if err := h.lockOpen(op); err != nil {
		return err
	}
	defer h.mu.Unlock()
	if p, ok := h.params[name]; ok {
		if p.dir == RO {
			return errf(op, "", "", rtapi.ErrInvalid, "parameter %q is not writable", name)
		}
		w, err := ParseValue(p.typ, value)
		if err != nil {
			return &Error{Op: op, Err: fmt.Errorf("parameter %q: %w", name, err)}
		}
		h.data.access(func() { atomic.StoreUint64(p.ref.Load(), w) })
		return nil
	}
	p, ok := h.pins[name]
	if !ok {
		return errf(op, "", "", rtapi.ErrInvalid, "pin or parameter %q does not exist", name)
	}
	if p.dir == Out {
		return errf(op, "", "", rtapi.ErrInvalid, "pin %q is an OUT pin, not writable", name)
	}
	if p.sig != nil {
		return errf(op, "", "", rtapi.ErrInvalid, "pin %q is connected to signal %q (use sets)", name, p.sig.name)
	}
	w, err := ParseValue(p.typ, value)
	if err != nil {
		return &Error{Op: op, Err: fmt.Errorf("pin %q: %w", name, err)}
	}
	h.data.access(func() { atomic.StoreUint64(p.own, w) })
	return nil
}

// GetP reads a parameter or pin, formatted by FormatValue (halcmd getp).
func (h *HAL) GetP(name string) (string, error) {
	if err := h.lockOpen("getp"); err != nil {
		return "", err
	}
	defer h.mu.Unlock()
	if p, ok := h.params[name]; ok {
		return FormatValue(p.typ, h.data.load(p.ref.Load())), nil
	}
	if p, ok := h.pins[name]; ok {
		return FormatValue(p.typ, h.data.load(p.ref.Load())), nil
	}
	return "", errf("getp", "", "", rtapi.ErrInvalid, "pin or parameter %q does not exist", name)
}

// SetS sets a signal that no Out pin drives (halcmd sets).
func (h *HAL) SetS(name, value string) error {
	const op = "sets"
	if err := h.lockOpen(op); err != nil {
		return err
	}
	defer h.mu.Unlock()
	s, ok := h.sigs[name]
	if !ok {
		return errf(op, "", "", rtapi.ErrInvalid, "signal %q does not exist", name)
	}
	if w, n, _, _ := s.counts(); n > 0 {
		return errf(op, "", "", rtapi.ErrInvalid, "signal %q already has writer pin %q", name, w.name)
	}
	w, err := ParseValue(s.typ, value)
	if err != nil {
		return &Error{Op: op, Err: fmt.Errorf("signal %q: %w", name, err)}
	}
	h.data.access(func() { atomic.StoreUint64(s.value, w) })
	return nil
}

// GetS reads a signal (halcmd gets).
func (h *HAL) GetS(name string) (string, error) {
	if err := h.lockOpen("gets"); err != nil {
		return "", err
	}
	defer h.mu.Unlock()
	s, ok := h.sigs[name]
	if !ok {
		return "", errf("gets", "", "", rtapi.ErrInvalid, "signal %q does not exist", name)
	}
	return FormatValue(s.typ, h.data.load(s.value)), nil
}
