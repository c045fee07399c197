package hal_test

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// componentPins leaves out the HAL's own timing pins (NAME.time,
// NAME.threadbeat) from pins.
func componentPins(pins []hal.PinInfo) []hal.PinInfo {
	var out []hal.PinInfo
	for _, p := range pins {
		if !strings.HasSuffix(p.Name, ".time") && !strings.HasSuffix(p.Name, ".threadbeat") {
			out = append(out, p)
		}
	}
	return out
}

// Every thread and every function has LinuxCNC's timing items in the
// HAL: NAME.time (s32 OUT pin), NAME.tmax (s32 RW parameter), a
// function's NAME.tmax-increased (bit RO parameter) and a thread's
// NAME.threadbeat (s64 OUT pin). getp reads them while the thread runs;
// setp NAME.tmax, from this process or another through the data segment
// (halcmd), resets the worst time, and tmax-increased says whether the
// last call raised it.
func TestThreadAndFunctionTimesInTheHAL(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	rttest.RequireSelfExec(t) // a data segment in a private directory
	dir := t.TempDir()
	h, err := hal.New(openRT(t, rtapi.Options{}), hal.Options{DataKey: 0x7135, ShmDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	th, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	c, err := h.NewComponent("work")
	require.NoError(t, err)
	var hold atomic.Bool
	inside, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { hold.Store(false); close(release) })
	c.ExportContext("work.update", func(fc *hal.FuncContext) {
		start := fc.Now()
		for fc.Now() == start { // take some time on any clock
		}
		if hold.Load() {
			inside <- struct{}{}
			<-release
		}
	})
	require.NoError(t, c.Ready())
	require.NoError(t, h.AddFunct("work.update", "servo", hal.Last))
	get := func(name string) string {
		t.Helper()
		v, err := h.GetP(name)
		require.NoError(t, err)
		return v
	}
	num := func(name string) int64 {
		t.Helper()
		n, err := strconv.ParseInt(get(name), 10, 64)
		require.NoError(t, err, name)
		return n
	}

	require.NoError(t, h.Start())
	waitBeat(t, th, 3)
	for _, n := range []string{"servo.tmax", "servo.time", "work.update.tmax", "work.update.time"} {
		assert.Positive(t, num(n), n)
	}
	assert.GreaterOrEqual(t, num("servo.threadbeat"), int64(3))
	require.ErrorIs(t, h.SetP("work.update.tmax-increased", "1"), rtapi.ErrInvalid, "RO")
	require.ErrorIs(t, h.SetP("servo.time", "1"), rtapi.ErrInvalid, "an OUT pin")

	// The types and directions halcmd shows, in the data segment.
	d, err := hal.OpenView(hal.ViewOptions{DataKey: 0x7135, Dir: dir})
	require.NoError(t, err)
	defer d.Close()
	s, err := d.Read()
	require.NoError(t, err)
	kinds := map[string]string{}
	for _, p := range s.Pins {
		kinds[p.Name] = p.Owner + " pin " + p.Type.String() + " " + p.Dir.String()
	}
	for _, p := range s.Params {
		kinds[p.Name] = p.Owner + " param " + p.Type.String() + " " + p.Dir.String()
	}
	assert.Equal(t, "__servo pin s32 OUT", kinds["servo.time"])
	assert.Equal(t, "__servo param s32 RW", kinds["servo.tmax"])
	assert.Equal(t, "__servo pin s64 OUT", kinds["servo.threadbeat"])
	assert.Equal(t, "work pin s32 OUT", kinds["work.update.time"])
	assert.Equal(t, "work param s32 RW", kinds["work.update.tmax"])
	assert.Equal(t, "work param bit RO", kinds["work.update.tmax-increased"])

	// Hold a call, reset both .tmax from "halcmd", and let the call end:
	// it raises them. The next call is held before it is accounted.
	hold.Store(true)
	<-inside
	require.NoError(t, h.SetP("work.update.tmax", "0"))
	require.NoError(t, h.SetP("servo.tmax", "0"))
	assert.Equal(t, "0", get("work.update.tmax"))
	release <- struct{}{}
	<-inside
	assert.Positive(t, num("work.update.tmax"))
	assert.Equal(t, num("work.update.time"), num("work.update.tmax"), "the held call set both")
	assert.Equal(t, "TRUE", get("work.update.tmax-increased"))
	assert.Positive(t, num("servo.tmax"))
	assert.Equal(t, num("servo.time"), num("servo.tmax"))

	// A worst time no call reaches: the next call does not raise it.
	require.NoError(t, h.SetP("work.update.tmax", "2000000000"))
	release <- struct{}{}
	<-inside
	assert.Equal(t, "FALSE", get("work.update.tmax-increased"))
	assert.EqualValues(t, 2000000000, num("work.update.tmax"))
	hold.Store(false)
	release <- struct{}{}
	require.NoError(t, h.Stop())

	th.ResetMax()
	assert.Equal(t, "0", get("servo.tmax"))
	assert.Equal(t, "0", get("work.update.tmax"))
}

// Names too long for the timing items, or taken, do not keep a thread
// or a function from being made or run: it goes without those items.
func TestTimesWithRefusedNames(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h := newHAL(t, hal.Options{})
	c, err := h.NewComponent("taken")
	require.NoError(t, err)
	c.S32("servo.time", hal.Out) // a pin by the thread's item's name
	require.NoError(t, c.Ready())
	servo, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	long := strings.Repeat("t", hal.NameLen-1) // "__" + long is too long
	slow, err := h.NewThread(long, 2*time.Millisecond)
	require.NoError(t, err)
	f := strings.Repeat("f", hal.NameLen-1-len(".tmax")) // f.tmax-increased is too long
	_, err = h.Export(f, nop)
	require.NoError(t, err)
	require.NoError(t, h.AddFunct(f, "servo", hal.Last))
	require.NoError(t, h.Start())
	waitBeat(t, servo, 3)
	waitBeat(t, slow, 3)
	require.NoError(t, h.Stop())

	v, err := h.GetP("servo.time")
	require.NoError(t, err)
	assert.Equal(t, "0", v, "the component's pin, left alone")
	_, err = h.GetP("servo.tmax")
	require.NoError(t, err)
	_, err = h.GetP(long + ".tmax")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	_, err = h.GetP(f + ".tmax")
	require.NoError(t, err)
	_, err = h.GetP(f + ".tmax-increased")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
}
