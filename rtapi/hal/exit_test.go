package hal_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

var (
	exitOrder    []string
	registerExit sync.Once
)

// A component's OnExit hooks run once, newest first, at Close; a refused
// loadrt runs those of the component it made, and no other.
func TestOnExit(t *testing.T) {
	registerExit.Do(func() {
		hal.Register("exittest_ok", func(h *hal.HAL, a *hal.LoadArgs) error {
			c, err := h.NewComponent(a.Name)
			if err != nil {
				return err
			}
			c.OnExit(func() { exitOrder = append(exitOrder, "ok.1") })
			c.OnExit(func() { exitOrder = append(exitOrder, "ok.2") })
			return c.Ready()
		})
		hal.Register("exittest_bad", func(h *hal.HAL, a *hal.LoadArgs) error {
			c, err := h.NewComponent(a.Name)
			if err != nil {
				return err
			}
			c.OnExit(func() { exitOrder = append(exitOrder, "bad") })
			return errors.New("refused")
		})
	})
	exitOrder = nil
	h, err := hal.New(openRT(t, rtapi.Options{Flavor: "sim"}), hal.Options{})
	require.NoError(t, err)
	require.NoError(t, h.LoadRT("exittest_ok"))
	require.Error(t, h.LoadRT("exittest_bad"))
	assert.Equal(t, []string{"bad"}, exitOrder, "a refused loadrt runs its own component's hooks")
	require.NoError(t, h.Close())
	assert.Equal(t, []string{"bad", "ok.2", "ok.1"}, exitOrder)
	require.NoError(t, h.Close())
	assert.Len(t, exitOrder, 3, "a second Close runs nothing")
	assert.Panics(t, func() { (&hal.Component{}).OnExit(nil) })
}
