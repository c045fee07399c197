package hal

// OnExit registers fn to run once when the component goes (LinuxCNC's
// rtapi_app_exit): at HAL.Close, after the threads stopped and their safe
// states ran; at unloadrt (HAL.UnloadRT), after its functions left their
// threads and its safe states were removed; or when the loadrt that made
// the component is refused.
// Components use it to release what they hold outside the HAL (a device's
// file descriptors). Hooks run in reverse registration order with the
// HAL's lock held: fn must not call the HAL. A panic in fn is not
// recovered. A nil fn panics.
func (c *Component) OnExit(fn func()) {
	if fn == nil {
		panic("hal: Component.OnExit called with a nil function")
	}
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	c.exit = append(c.exit, fn)
}

// runExit runs the exit hooks of the components gone says (all when
// gone is nil), the newest first. Called with h.mu.
func (h *HAL) runExit(gone func(*Component) bool) {
	for i := len(h.comps) - 1; i >= 0; i-- {
		c := h.comps[i]
		if gone != nil && !gone(c) {
			continue
		}
		for j := len(c.exit) - 1; j >= 0; j-- {
			c.exit[j]()
		}
		c.exit = nil
	}
}
