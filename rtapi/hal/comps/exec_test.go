package comps_test

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

func newHAL(t *testing.T) *hal.HAL {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func loadText(t *testing.T, h *hal.HAL, name, src string) error {
	cmds, err := halfile.Parse(name, strings.NewReader(src))
	require.NoError(t, err)
	return h.Load(io.Discard, cmds)
}

// save prints a file that rebuilds the same HAL: saving the rebuilt one
// prints the same file.
func TestSaveRebuildsTheWiring(t *testing.T) {
	src, err := os.ReadFile("testdata/servo-loop.hal")
	require.NoError(t, err)
	h := newHAL(t)
	require.NoError(t, loadText(t, h, "servo-loop.hal", string(src)))
	require.NoError(t, h.SetP("pid.0.Igain", "0.125"))
	require.NoError(t, h.NewSignal("spare", hal.TypeS32))
	require.NoError(t, h.SetS("spare", "-5"))
	var saved bytes.Buffer
	require.NoError(t, h.Save(&saved))
	assert.Contains(t, saved.String(), "loadrt threads name1=servo period1=1000000\n")
	assert.Contains(t, saved.String(), "net vel-cmd pid.0.output sim_motor.0.command\n")
	assert.Contains(t, saved.String(), "newsig spare s32\n")
	assert.Contains(t, saved.String(), "setp pid.0.Igain 0.125\n")
	assert.Contains(t, saved.String(), "sets spare -5\n")
	assert.Contains(t, saved.String(), "addf siggen.0.update servo\naddf pid.0.do-pid-calcs servo\n")
	assert.True(t, strings.HasSuffix(saved.String(), "start\n"))

	h2 := newHAL(t)
	require.NoError(t, loadText(t, h2, "saved.hal", saved.String()))
	var again bytes.Buffer
	require.NoError(t, h2.Save(&again))
	assert.Equal(t, saved.String(), again.String())
}

// A file that fails at any line has started nothing, and says where.
func TestBadFileStartsNothing(t *testing.T) {
	h := newHAL(t)
	err := loadText(t, h, "bad.hal", `loadrt threads name1=servo period1=1000000
loadrt pid count=1
loadrt sim_motor
start
net x pid.0.output sim_motor.0.command
net y sim_motor.0.counts => pid.0.feedback
`)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.EqualError(t, err, `bad.hal:6: hal: net: type mismatch: pin "pid.0.feedback" is float, signal "y" is s64 of pin "sim_motor.0.counts": invalid argument`)
	assert.False(t, h.Running())
}

func TestShowShapes(t *testing.T) {
	h := newHAL(t)
	require.NoError(t, loadText(t, h, "x.hal", `loadrt threads name1=servo period1=1000000
loadrt scale count=1
loadrt not
net s scale.0.out => scale.0.in
addf scale.0 servo
setp scale.0.gain 2.5
`))
	var b bytes.Buffer
	require.NoError(t, h.Show(&b, "pin", "scale.0.o"))
	assert.Equal(t, `Component Pins:
Owner   Type  Dir                 Value  Name
    10  float IN                      0  scale.0.offset
    10  float OUT                     0  scale.0.out ==> s

`, b.String())
	b.Reset()
	require.NoError(t, h.Show(&b, "sig", ""))
	assert.Equal(t, `Signals:
Type                  Value  Name     (linked to)
float                     0  s
                                 ==> scale.0.in
                                 <== scale.0.out

`, b.String())
	b.Reset()
	require.NoError(t, h.Show(&b, "pin", "not.*.in"))
	assert.Contains(t, b.String(), "    13  bit   IN                  FALSE  not.0.in\n")
	b.Reset()
	require.NoError(t, h.Show(&b, "comp", ""))
	assert.Contains(t, b.String(), "    10  RT    scale    ")
	b.Reset()
	require.NoError(t, h.Show(&b, "funct", ""))
	assert.Regexp(t, `(?m)^ 000\d\d  [0-9a-f]{8,}  [0-9a-f]{8,}  YES      1   scale\.0$`, b.String())
	b.Reset()
	require.NoError(t, h.Exec(&b, halfile.Command{Verb: "getp", Args: []string{"scale.0.gain"}}))
	assert.Equal(t, "2.5\n", b.String())
	assert.ErrorIs(t, h.Show(&b, "nothing", ""), rtapi.ErrInvalid)
}
