//go:build !linux

package comps

import (
	"fmt"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// hal_gpio drives Linux's GPIO character device; elsewhere loadrt
// hal_gpio is ErrNotSupported (docs/GPIO.md).
func init() {
	hal.Register("hal_gpio", func(_ *hal.HAL, a *hal.LoadArgs) error {
		return fmt.Errorf("loadrt %s: needs Linux's GPIO character device (/dev/gpiochipN): %w", a.Name, rtapi.ErrNotSupported)
	})
}
