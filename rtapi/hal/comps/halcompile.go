package comps

import (
	"fmt"
	"strings"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// halcompInstances is instances for a halcompile (.comp) component: its
// default instances (no names=) are named as halcompile.g's rtapi_app_main
// names them, to_hal(removeprefix(comp_name, "hal_")).N, where to_hal
// turns every '_' into '-' (loadrt conv_bit_u32 makes conv-bit-u32.0).
// Names given with names= are kept as given; the component keeps its
// loadrt name.
func halcompInstances(def int, inst func(c *hal.Component, p string)) hal.Factory {
	return func(h *hal.HAL, a *hal.LoadArgs) error {
		if _, ok := a.Get("num_chan"); ok {
			return fmt.Errorf("loadrt %s: unknown argument \"num_chan\" (take count= or names=): %w", a.Name, rtapi.ErrInvalid)
		}
		names, err := a.Instances(def)
		if err != nil {
			return err
		}
		if given, ok := a.Get("names"); !ok || given == "" {
			for i := range names {
				names[i] = fmt.Sprintf("%s.%d", halcompPrefix(a.Name), i)
			}
		}
		c, err := h.NewComponent(a.Name)
		if err != nil {
			return err
		}
		for _, n := range names {
			inst(c, n)
		}
		return c.Ready()
	}
}

// halcompPrefix is halcompile's to_hal(removeprefix(comp, "hal_")): '_'
// becomes '-', then trailing '-' and '.' are trimmed.
func halcompPrefix(comp string) string {
	return strings.TrimRight(strings.TrimRight(strings.ReplaceAll(strings.TrimPrefix(comp, "hal_"), "_", "-"), "-"), ".")
}
