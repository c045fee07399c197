package hal_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// oddHAL makes a HAL whose names are valid but look like halcmd syntax:
// verbs, "=" inside a name, a leading "]".
func oddHAL(t *testing.T) *hal.HAL {
	h := newHAL(t, hal.Options{})
	c, err := h.NewComponent("start")
	require.NoError(t, err)
	c.Float("sets", hal.Out)
	c.Float("a=b", hal.In)
	c.Float("]x", hal.In)
	c.S32("net", hal.In)
	c.FloatParam("=x", hal.RW)
	c.Export("start.=>f", func(time.Duration, int64) {})
	require.NoError(t, c.Ready())
	_, err = h.NewThread("setp", time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("start.=>f", "setp", hal.Last))
	require.NoError(t, h.Net("newsig", "sets", "a=b"))
	require.NoError(t, h.NewSignal("x=", hal.TypeS32))
	require.NoError(t, h.SetS("x=", "-5"))
	require.NoError(t, h.SetP("=x", "1.5"))
	require.NoError(t, h.SafeP("setp", "]x", "2"))
	return h
}

// A HAL saved with names that look like halcmd syntax loads back to one
// that saves the same file.
func TestSaveLoadsBackOddNames(t *testing.T) {
	h := oddHAL(t)
	var saved bytes.Buffer
	require.NoError(t, h.Save(&saved))
	assert.Contains(t, saved.String(), "net newsig sets a=b\n")
	assert.Contains(t, saved.String(), "setp =x 1.5\n")
	assert.Contains(t, saved.String(), "sets x= -5\n")
	assert.Contains(t, saved.String(), "addf start.=>f setp\n")

	h2 := newHAL(t, hal.Options{})
	c, err := h2.NewComponent("start")
	require.NoError(t, err)
	c.Float("sets", hal.Out)
	c.Float("a=b", hal.In)
	c.Float("]x", hal.In)
	c.S32("net", hal.In)
	c.FloatParam("=x", hal.RW)
	c.Export("start.=>f", func(time.Duration, int64) {})
	require.NoError(t, c.Ready())
	_, err = h2.NewThread("setp", time.Millisecond)
	require.NoError(t, err)
	cmds, err := halfile.Parse("saved.hal", strings.NewReader(saved.String()))
	require.NoError(t, err)
	require.NoError(t, h2.Load(io.Discard, cmds))
	var again bytes.Buffer
	require.NoError(t, h2.Save(&again))
	assert.Equal(t, saved.String(), again.String())
}

// Names a .hal file cannot hold are refused when they are made. Before,
// a signal named "=" was made, and save wrote "sets = 0", which read
// back as "setp sets 0".
func TestNamesSaveCannotHoldAreRefused(t *testing.T) {
	h := oddHAL(t)
	c, err := h.NewComponent("d")
	require.NoError(t, err)
	for _, bad := range []string{"=", "=>", "<=", "<=>", `a"b`, "a'b", "#c", "c#", "$X", "[A]B", `a\`, "a\u009bb", "a\x9bb"} {
		assert.ErrorIs(t, h.NewSignal(bad, hal.TypeFloat), rtapi.ErrInvalid, "newsig %q", bad)
		assert.ErrorIs(t, h.Net(bad, "net"), rtapi.ErrInvalid, "net %q", bad)
		_, err := h.NewComponent(bad)
		assert.ErrorIs(t, err, rtapi.ErrInvalid, "component %q", bad)
		_, err = h.NewThread(bad, time.Millisecond)
		assert.ErrorIs(t, err, rtapi.ErrInvalid, "thread %q", bad)
	}
	c.Float("=>", hal.In)
	assert.ErrorIs(t, c.Ready(), rtapi.ErrInvalid)
}
