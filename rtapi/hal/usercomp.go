package hal

import (
	"fmt"
	"sync/atomic"

	"github.com/gortapi/gortapi/rtapi"
)

// User-space components (LinuxCNC's loadusr programs) live in another
// process and reach the host through its command channel (package halctl):
// the channel makes their component, pins and parameters here, writes
// their values with SetOwn and removes the component (Remove) when the process's
// connection ends (HACKING.md, "One way into a running HAL").

// NewUserComponent is NewComponent for a component of the user-space
// process pid: show comp lists it as User with that pid.
func (h *HAL) NewUserComponent(name string, pid int) (*Component, error) {
	h.mu.Lock()
	h.nextCompID(userIDs)
	h.mu.Unlock()
	c, err := h.NewComponent(name)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c.pid, c.user = pid, true
	h.data.access(func() { atomic.StoreInt64(&c.e.PID, int64(pid)) })
	return c, nil
}

// Pin makes a pin of a type known only at run time (a user component's);
// its value is set with SetOwn and read with HAL.GetP. Errors are kept
// as the typed builders keep them (Err, Ready).
func (c *Component) Pin(name string, t Type, d Dir) {
	if !t.valid() || d < In || d > IO {
		c.fail(errf("new pin", "", "", rtapi.ErrInvalid, "pin %q: type %v, direction %v", name, t, d))
		return
	}
	c.newPin(name, t, d)
}

// Param makes a parameter of a type known only at run time, as Pin does.
func (c *Component) Param(name string, t Type, d ParamDir) {
	if !t.valid() || d < RO || d > RW {
		c.fail(errf("new param", "", "", rtapi.ErrInvalid, "parameter %q: type %v, direction %v", name, t, d))
		return
	}
	c.newParam(name, t, d)
}

// Owns reports whether name is one of the component's pins or parameters.
func (c *Component) Owns(name string) bool {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	if p, ok := c.h.params[name]; ok && p.comp == c {
		return true
	}
	p, ok := c.h.pins[name]
	return ok && p.comp == c
}

// SetOwn parses value (ParseValue) and stores it into one of the
// component's own pins or parameters, as its code's Set would: an Out or
// IO pin (into its signal when linked), or a parameter RO or RW. An In
// pin, which its signal or setp writes, is refused, as is another
// component's item (ErrInvalid).
func (c *Component) SetOwn(name, value string) error {
	const op = "set own"
	h := c.h
	if err := h.lockOpen(op); err != nil {
		return err
	}
	defer h.mu.Unlock()
	var ref *word
	var t Type
	if p, ok := h.params[name]; ok && p.comp == c {
		ref, t = p.ref, p.typ
	} else if p, ok := h.pins[name]; ok && p.comp == c {
		if p.dir == In {
			return errf(op, "", "", rtapi.ErrInvalid, "pin %q is an IN pin: its signal or setp writes it", name)
		}
		ref, t = p.ref, p.typ
	} else {
		return errf(op, "", "", rtapi.ErrInvalid, "component %q has no pin or parameter %q", c.name, name)
	}
	w, err := ParseValue(t, value)
	if err != nil {
		return &Error{Op: op, Err: fmt.Errorf("%q: %w", name, err)}
	}
	h.data.access(func() { atomic.StoreUint64(ref.Load(), w) })
	return nil
}
