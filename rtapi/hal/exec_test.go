package hal_test

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// exec runs one halcmd line on h, as a control client's line runs.
func exec(t *testing.T, h *hal.HAL, line string) error {
	t.Helper()
	c, ok, err := halfile.ParseLine(line)
	require.NoError(t, err, line)
	require.True(t, ok, line)
	return h.Exec(io.Discard, c)
}

// testComps registers, once, the components these tests load: "tpart"
// makes a component with pins, a parameter, a function and a thread,
// takes pins=N and fail=1 (the factory then fails after making it all).
var testCompsRegistered atomic.Bool

func registerTestComps() {
	if !testCompsRegistered.CompareAndSwap(false, true) {
		return
	}
	hal.Register("tpart", func(h *hal.HAL, a *hal.LoadArgs) error {
		n, err := a.Int("pins", 1)
		if err != nil {
			return err
		}
		fail, err := a.Int("fail", 0)
		if err != nil {
			return err
		}
		thread, _ := a.Get("thread")
		c, err := h.NewComponent("tpart")
		if err != nil {
			return err
		}
		for i := range n {
			c.Float(fmt.Sprintf("tpart.in%d", i), hal.In)
		}
		c.Float("tpart.out", hal.Out)
		c.FloatParam("tpart.gain", hal.RW)
		c.Export("tpart.update", func(time.Duration, int64) {})
		if thread != "" {
			if _, err := h.NewThread(thread, time.Millisecond); err != nil {
				return err
			}
		}
		if err := c.Ready(); err != nil {
			return err
		}
		if fail != 0 {
			return fmt.Errorf("tpart: told to fail: %w", rtapi.ErrInvalid)
		}
		return nil
	})
}

// The classic slip "net pid.0.output pwmgen.0.value", which leaves out
// the signal name, is refused as halcmd refuses it, and makes nothing.
func TestNetRefusesSignalNamedAsPin(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	twoComps(t, h)
	err := exec(t, h, "net a.out b.in")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, "Signal name 'a.out' must not be the same as a pin.  Did you omit the signal name?")
	_, err = h.GetS("a.out")
	assert.ErrorContains(t, err, "does not exist", "no signal was made")
	s, err := h.View().Read()
	require.NoError(t, err)
	assert.Empty(t, s.Signals)
	// Also when a signal of that name exists (halcmd checks the name).
	require.NoError(t, h.NewSignal("b.in", hal.TypeFloat))
	err = h.Net("b.in", "a.out")
	assert.ErrorContains(t, err, "Did you omit the signal name?")
	// A pin's own checks come first, as in halcmd's preflight.
	assert.ErrorContains(t, h.Net("a.out", "nope"), `pin "nope" does not exist`)
}

// A pin given twice to net is linked once, as halcmd's linkps of a pin
// already on the signal does; an OUT pin given twice is two writers.
func TestNetPinGivenTwice(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	twoComps(t, h)
	require.NoError(t, h.Net("x", "b.in", "b.in"))
	s, err := h.View().Read()
	require.NoError(t, err)
	require.Len(t, s.Signals, 1)
	assert.Equal(t, []string{"b.in"}, s.Signals[0].Pins)
	err = h.Net("y", "a.out", "a.out")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, `cannot add OUT pin "a.out"`)
}

// An OUT or I/O pin joining a signal that only readers are on gives the
// signal its value, as hal_link copies the pin's own value when the
// signal has no writer yet.
func TestLinkWriterGivesSignalItsValue(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	p := twoComps(t, h)
	require.NoError(t, h.SetP("b.in", "2"))
	require.NoError(t, h.Net("x", "b.in"))
	p.outF.Set(5)
	require.NoError(t, h.Net("x", "a.out"))
	v, err := h.GetS("x")
	require.NoError(t, err)
	assert.Equal(t, "5", v, "the OUT pin's value, not the first reader's")

	c, err := h.NewComponent("c")
	require.NoError(t, err)
	c.Float("c.in", hal.In).Set(7)
	c.Float("c.io", hal.IO).Set(9)
	require.NoError(t, c.Ready())
	require.NoError(t, h.Net("y", "b.io"))
	require.NoError(t, h.Net("y", "c.in"))
	v, _ = h.GetS("y")
	assert.Equal(t, "0", v, "a reader joining an I/O pin takes the signal's value")
	require.NoError(t, h.Net("y", "c.io"))
	v, _ = h.GetS("y")
	assert.Equal(t, "0", v, "a second I/O pin does not drive its value onto the signal")
}

// addf's position counts as halcmd's: 1 first, -1 last, -2 before the
// last; 0 and positions past either end are refused with its words.
func TestAddfPositions(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h := newHAL(t, hal.Options{})
	th, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		_, err := h.Export(n, nop)
		require.NoError(t, err)
	}
	err = exec(t, h, "addf a servo 0")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, "bad position: 0")
	assert.Empty(t, th.Functs(), "position 0 is refused, not taken as last")

	err = exec(t, h, "addf a servo 2")
	assert.ErrorContains(t, err, "position '2' is too high")
	err = exec(t, h, "addf a servo -2")
	assert.ErrorContains(t, err, "position '-2' is too low")
	require.NoError(t, exec(t, h, "addf c servo -1")) // [c]
	require.NoError(t, exec(t, h, "addf a servo 1"))  // [a c]
	require.NoError(t, exec(t, h, "addf e servo 3"))  // [a c e]
	require.NoError(t, exec(t, h, "addf d servo -2")) // [a c d e]
	require.NoError(t, exec(t, h, "addf b servo -4")) // [a b c d e]
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, th.Functs())
	assert.ErrorContains(t, exec(t, h, "addf f servo 7"), "position '7' is too high")
	assert.ErrorContains(t, exec(t, h, "addf f servo -7"), "position '-7' is too low")
	require.NoError(t, exec(t, h, "addf f servo 6"))
	require.NoError(t, exec(t, h, "addf g servo -7"))
	assert.Equal(t, []string{"g", "a", "b", "c", "d", "e", "f"}, th.Functs())
	assert.ErrorContains(t, exec(t, h, "addf nope servo 0"), "bad position: 0", "0 is refused before the names")
	assert.ErrorContains(t, exec(t, h, "addf nope servo 9"), "no function of that name")
}

// newsig/delsig free the signal's slot: three times MaxSignals cycles
// leave a HAL that makes signals as a new one does.
func TestDelsigFreesTheSlot(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	p := twoComps(t, h)
	for i := range 3 * hal.MaxSignals {
		name := fmt.Sprintf("s%d", i)
		require.NoError(t, h.NewSignal(name, hal.TypeFloat), "cycle %d", i)
		require.NoError(t, h.DeleteSignal(name), "cycle %d", i)
	}
	require.NoError(t, h.Net("x", "a.out", "b.in"))
	p.outF.Set(1.25)
	assert.Equal(t, 1.25, p.inF.Get())
	for i := range hal.MaxSignals - 1 {
		require.NoError(t, h.NewSignal(fmt.Sprintf("t%d", i), hal.TypeS32))
	}
	err := h.NewSignal("one-too-many", hal.TypeBit)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, "the most one HAL holds")
	s, err := h.View().Read()
	require.NoError(t, err)
	assert.Len(t, s.Signals, hal.MaxSignals)
}

// A control client's newsig/delsig churn, through hal.Exec with
// halfile-parsed lines, does not leave the host refusing new signals
// (issue #37, item 7).
func TestControlClientSignalChurn(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	for i := range hal.MaxSignals + 8 {
		require.NoError(t, exec(t, h, fmt.Sprintf("newsig churn%d float", i)), "cycle %d", i)
		require.NoError(t, exec(t, h, fmt.Sprintf("delsig churn%d", i)), "cycle %d", i)
	}
	require.NoError(t, exec(t, h, "newsig after s32"))
	require.NoError(t, exec(t, h, "sets after -3"))
	var out bytes.Buffer
	c, _, err := halfile.ParseLine("gets after")
	require.NoError(t, err)
	require.NoError(t, h.Exec(&out, c))
	assert.Equal(t, "-3\n", out.String())
}

// A loadrt refused for an argument no one takes leaves nothing behind:
// the corrected line loads, and save writes one loadrt for it. Through
// hal.Exec, as a control client runs it (issue #37, item 8).
func TestLoadRTRefusedLeavesNothing(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	registerTestComps()
	h, _ := openSim(t)
	err := exec(t, h, "loadrt tpart pins=2 thread=t1 debug=1")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, `unknown argument "debug"`)
	s, err := h.View().Read()
	require.NoError(t, err)
	assert.Empty(t, s.Comps)
	assert.Empty(t, s.Pins)
	assert.Empty(t, s.Params)
	assert.Empty(t, h.Functs())
	assert.Empty(t, h.Threads())

	require.NoError(t, exec(t, h, "loadrt tpart pins=2 thread=t1"))
	require.NoError(t, exec(t, h, "setp tpart.gain 2.5"))
	require.NoError(t, exec(t, h, "addf tpart.update t1"))
	var saved bytes.Buffer
	require.NoError(t, h.Save(&saved))
	assert.Equal(t, 1, strings.Count(saved.String(), "loadrt "), saved.String())
	assert.Contains(t, saved.String(), "loadrt tpart pins=2 thread=t1\n")
	assert.Contains(t, saved.String(), "setp tpart.gain 2.5\n")
	s, err = h.View().Read()
	require.NoError(t, err)
	s = withoutTiming(s)
	require.Len(t, s.Comps, 1)
	assert.Len(t, s.Pins, 3)
	for _, p := range s.Pins {
		assert.Equal(t, "tpart", p.Owner)
	}
}

// withoutTiming leaves out the items the HAL makes for thread and
// function timing (hal_lib.c's): the "__THREAD" components and their
// pins, and every FUNCT.time pin.
func withoutTiming(s hal.Snapshot) hal.Snapshot {
	s.Comps = slices.DeleteFunc(slices.Clone(s.Comps), func(c hal.CompInfo) bool { return strings.HasPrefix(c.Name, "__") })
	s.Pins = slices.DeleteFunc(slices.Clone(s.Pins), func(p hal.PinInfo) bool {
		return strings.HasPrefix(p.Owner, "__") || strings.HasSuffix(p.Name, ".time")
	})
	return s
}

// A factory that fails after making a component, pins, a parameter, a
// function and a thread leaves none of them; repeated, it frees their
// slots, so the table limits are not used up.
func TestLoadRTFailedFactoryFreesEverything(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	registerTestComps()
	h, _ := openSim(t)
	twoComps(t, h)
	require.NoError(t, h.Net("x", "a.out", "b.in"))
	const pins = 500
	for i := range 3 * hal.MaxPins / pins {
		err := h.LoadRT("tpart", fmt.Sprintf("pins=%d", pins), "thread=t", "fail=1")
		require.ErrorIs(t, err, rtapi.ErrInvalid, "try %d", i)
		assert.ErrorContains(t, err, "told to fail")
	}
	for range 2 * hal.MaxComps {
		require.Error(t, h.LoadRT("tpart", "fail=1"))
	}
	assert.Len(t, h.Functs(), 0)
	assert.Empty(t, h.Threads())
	require.NoError(t, h.LoadRT("tpart", fmt.Sprintf("pins=%d", pins), "thread=t"))
	s, err := h.View().Read()
	require.NoError(t, err)
	s = withoutTiming(s)
	assert.Len(t, s.Comps, 3)
	assert.Len(t, s.Pins, 9+pins+1)
	require.Len(t, s.Signals, 1)
	assert.Equal(t, []string{"a.out", "b.in"}, s.Signals[0].Pins, "what was there before is untouched")
	var saved bytes.Buffer
	require.NoError(t, h.Save(&saved))
	assert.Equal(t, 1, strings.Count(saved.String(), "loadrt "), saved.String())
}

// A loadrt whose factory fails on its own (a bad count) is refused
// without a trace too, and errors keep their sentinel.
func TestLoadRTBadValueLeavesNothing(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	registerTestComps()
	h, _ := openSim(t)
	err := h.LoadRT("tpart", "pins=x")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.NoError(t, h.LoadRT("tpart", "pins=1"))
	err = h.LoadRT("tpart", "pins=1")
	require.ErrorIs(t, err, rtapi.ErrInvalid, "a second tpart component is a duplicate")
	s, err := h.View().Read()
	require.NoError(t, err)
	s = withoutTiming(s)
	assert.Len(t, s.Comps, 1)
	assert.Len(t, s.Pins, 2)
}

// newsig takes halcmd's type names, the newer ones too (bool, real,
// sint, uint), in any case; a port signal is refused as no such type.
func TestNewsigTypeNames(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	for name, want := range map[string]hal.Type{
		"bit": hal.TypeBit, "BOOL": hal.TypeBit, "float": hal.TypeFloat, "real": hal.TypeFloat,
		"s32": hal.TypeS32, "U32": hal.TypeU32, "s64": hal.TypeS64, "sint": hal.TypeS64,
		"u64": hal.TypeU64, "uint": hal.TypeU64,
	} {
		require.NoError(t, exec(t, h, "newsig sig-"+name+" "+name), name)
		s, err := h.View().Read()
		require.NoError(t, err)
		for _, sig := range s.Signals {
			if sig.Name == "sig-"+name {
				assert.Equal(t, want, sig.Type, name)
			}
		}
	}
	err := exec(t, h, "newsig p port")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, `unknown type "port"`)
}

// "delsig all" deletes every signal, as halcmd's does, and is refused
// when there is none.
func TestDelsigAll(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _ := openSim(t)
	p := twoComps(t, h)
	err := exec(t, h, "delsig all")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, "no signals found to be deleted")
	require.NoError(t, h.Net("x", "a.out", "b.in"))
	require.NoError(t, h.NewSignal("spare", hal.TypeBit))
	p.outF.Set(2)
	require.NoError(t, exec(t, h, "delsig all"))
	s, err := h.View().Read()
	require.NoError(t, err)
	assert.Empty(t, s.Signals)
	assert.Equal(t, 2.0, p.inF.Get(), "the pin keeps the signal's last value")
}
