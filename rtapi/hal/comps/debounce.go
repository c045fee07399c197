package comps

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

func init() { hal.Register("debounce", loadDebounce) }

// debounce.c's MAX_GROUP and MAX_GROUP_SIZE.
const (
	debounceMaxGroup     = 8
	debounceMaxGroupSize = 50
)

// loadDebounce is debounce.c's rtapi_app_main: cfg=N0,N1,... makes one
// group per leading non-zero item, of that many filters (1 to 50). A bad
// size, or no group, is ErrInvalid.
func loadDebounce(h *hal.HAL, a *hal.LoadArgs) error {
	var cfg [debounceMaxGroup]int32
	if err := mpIntArray(a, "cfg", cfg[:]); err != nil {
		return err
	}
	n := 0
	for ; n < debounceMaxGroup && cfg[n] != 0; n++ {
		if cfg[n] < 1 || cfg[n] > debounceMaxGroupSize {
			return fmt.Errorf("loadrt debounce: bad group size '%d' (1 to %d): %w", cfg[n], debounceMaxGroupSize, rtapi.ErrInvalid)
		}
	}
	if n == 0 {
		return fmt.Errorf("loadrt debounce: no channels configured (give cfg=): %w", rtapi.ErrInvalid)
	}
	c, err := h.NewComponent(a.Name)
	if err != nil {
		return err
	}
	for g := range n {
		newDebounceGroup(c, g, int(cfg[g]))
	}
	return c.Ready()
}

// debounceFilter is debounce.c's debounce_t; state is not exported
// (EXPORT_STATE is off in LinuxCNC's build).
type debounceFilter struct {
	in, out hal.Bit
	state   int32
}

// debounce (debounce(9)) group g: parameter debounce.G.delay (s32 RW,
// 5), function debounce.G, and size filters debounce.G.F with pins in
// and out. Each filter's state counts up while in is TRUE, to delay, and
// down while FALSE, to 0; out turns TRUE at delay and FALSE at 0, and
// holds in between. A negative delay is set to 1.
func newDebounceGroup(c *hal.Component, g, size int) hal.Func {
	p := fmt.Sprintf("debounce.%d", g)
	delay := c.S32Param(p+".delay", hal.RW)
	delay.Set(5)
	filters := make([]debounceFilter, size)
	fn := func(time.Duration, int64) {
		if delay.Get() < 0 {
			delay.Set(1)
		}
		for i := range filters {
			f := &filters[i]
			if f.in.Get() {
				if f.state < delay.Get() {
					f.state++
				} else {
					f.out.Set(true)
				}
			} else {
				if f.state > 0 {
					f.state--
				} else {
					f.out.Set(false)
				}
			}
		}
	}
	c.Export(p, fn)
	for n := range filters {
		q := fmt.Sprintf("%s.%d", p, n)
		filters[n].in = c.Bit(q+".in", hal.In)
		filters[n].out = c.Bit(q+".out", hal.Out)
	}
	return fn
}
