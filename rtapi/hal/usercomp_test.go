package hal_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// Issue 38, 4: a user-space component's pins are made at run time
// (Pin, Param), written by their owner (SetOwn: its Out pin drives its
// signal, its In pin and other components' items are refused), and
// removed with it (Remove: pins unlinked, signal kept, name and slot free
// again, a later refused loadrt still undone). Before, a component could
// not be removed and SetOwn did not exist.
func TestUserComponentRemove(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	registerTestComps()
	h, _ := openSim(t)
	first, err := h.NewComponent("first")
	require.NoError(t, err)
	first.Float("first.in", hal.In)
	require.NoError(t, first.Ready())
	u, err := h.NewUserComponent("panel", 4242)
	require.NoError(t, err)
	u.Pin("panel.jog", hal.TypeFloat, hal.Out)
	u.Pin("panel.pos", hal.TypeFloat, hal.In)
	u.Param("panel.scale", hal.TypeS32, hal.RO)
	require.NoError(t, u.Ready())
	require.NoError(t, h.Net("jog", "panel.jog", "first.in"))
	require.NoError(t, u.SetOwn("panel.jog", "1.5"))
	require.NoError(t, u.SetOwn("panel.scale", "3"))
	v, err := h.GetP("first.in")
	require.NoError(t, err)
	assert.Equal(t, "1.5", v)
	assert.ErrorIs(t, u.SetOwn("panel.pos", "1"), rtapi.ErrInvalid)
	assert.ErrorIs(t, u.SetOwn("first.in", "1"), rtapi.ErrInvalid)
	s, err := h.View().Read()
	require.NoError(t, err)
	assert.Contains(t, s.Comps, hal.CompInfo{Name: "panel", PID: 4242, Ready: true, User: true, ID: 6})

	last, err := h.NewComponent("last")
	require.NoError(t, err)
	require.NoError(t, last.Ready())
	require.NoError(t, u.Remove())
	assert.ErrorIs(t, u.Remove(), rtapi.ErrInvalid, "twice")
	_, err = h.GetP("panel.jog")
	assert.Error(t, err)
	sig, err := h.GetS("jog")
	require.NoError(t, err, "the signal stays")
	assert.Equal(t, "1.5", sig)
	s, err = h.View().Read()
	require.NoError(t, err)
	assert.NotContains(t, s.Comps, hal.CompInfo{Name: "panel", PID: 4242, Ready: true, User: true, ID: 6})

	// The freed slot is reused; a refused loadrt that took it is undone.
	require.Error(t, exec(t, h, "loadrt tpart pins=2 thread=t1 debug=1"))
	_, err = h.NewUserComponent("panel", 4243)
	require.NoError(t, err, "the name is free again")
	s, err = h.View().Read()
	require.NoError(t, err)
	names := []string{}
	for _, c := range s.Comps {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"first", "panel", "last"}, names, "panel in its old slot, no tpart left")

	f, err := h.NewComponent("worker")
	require.NoError(t, err)
	f.Export("worker.update", func(time.Duration, int64) {})
	require.NoError(t, f.Ready())
	assert.ErrorIs(t, f.Remove(), rtapi.ErrState, "a component with functions stays")
}
