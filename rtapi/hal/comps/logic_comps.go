package comps

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// The logic and timing components of LinuxCNC, each its .comp file's
// FUNCTION(_) as halcompile expands it: pin names are the .comp names
// with _ as - and a trailing _ dropped, instances take count= or names=,
// and the one function is named as the instance. Each constructor
// exports that function and returns it (for the tests).

func init() {
	hal.Register("estop_latch", halcompFunc(newEstopLatch))
	hal.Register("charge_pump", loadChargePump)
	hal.Register("oneshot", halcompFunc(newOneshot))
	hal.Register("flipflop", halcompFunc(newFlipflop))
	hal.Register("edge", halcompFunc(newEdge))
	hal.Register("toggle", halcompFunc(newToggle))
	hal.Register("timedelay", halcompFunc(newTimedelay))
	hal.Register("logic", loadLogic)
	hal.Register("updown", halcompFunc(newUpdown))
}

// halcompFunc is instances(1, inst) for a constructor that returns its
// function.
func halcompFunc(inst func(c *hal.Component, p string) hal.Func) hal.Factory {
	return halcompInstances(1, func(c *hal.Component, p string) { inst(c, p) })
}

// exportInstance exports fn as the instance p and returns it.
func exportInstance(c *hal.Component, p string, fn hal.Func) hal.Func {
	c.Export(p, fn)
	return fn
}

// estop_latch (estop_latch(9)): starts faulted (ok-out FALSE, fault-out
// TRUE); a rising edge of reset while ok-in and not fault-in makes it
// OK, ok-in FALSE or fault-in TRUE faults it. watchdog toggles every
// period while OK and inputs are good.
func newEstopLatch(c *hal.Component, p string) hal.Func {
	var (
		okIn, faultIn   = c.Bit(p+".ok-in", hal.In), c.Bit(p+".fault-in", hal.In)
		reset           = c.Bit(p+".reset", hal.In)
		okOut, faultOut = c.Bit(p+".ok-out", hal.Out), c.Bit(p+".fault-out", hal.Out)
		watchdog        = c.Bit(p+".watchdog", hal.Out)
		oldReset        bool
	)
	okIn.Set(true)
	faultOut.Set(true)
	return exportInstance(c, p, func(time.Duration, int64) {
		if okIn.Get() && !faultIn.Get() {
			if reset.Get() && !oldReset {
				okOut.Set(true)
				faultOut.Set(false)
			}
			if okOut.Get() {
				watchdog.Set(!watchdog.Get())
			}
		} else {
			okOut.Set(false)
			faultOut.Set(true)
		}
		oldReset = reset.Get()
	})
}

// loadChargePump makes charge_pump's single instance, charge-pump
// (halcompile's option singleton): it takes no argument.
func loadChargePump(h *hal.HAL, a *hal.LoadArgs) error {
	c, err := h.NewComponent(a.Name)
	if err != nil {
		return err
	}
	newChargePump(c, "charge-pump")
	return c.Ready()
}

// charge_pump (charge_pump(9)): while enable, a counter counts periods
// and out, out-2 and out-4 are its bits 0, 1 and 2; else all are FALSE.
func newChargePump(c *hal.Component, p string) hal.Func {
	var (
		out, out2 = c.Bit(p+".out", hal.Out), c.Bit(p+".out-2", hal.Out)
		out4      = c.Bit(p+".out-4", hal.Out)
		enable    = c.Bit(p+".enable", hal.In)
		acc       int32 // charge_pump.comp's static int acc
	)
	enable.Set(true)
	return exportInstance(c, p, func(time.Duration, int64) {
		if enable.Get() {
			acc++
			out.Set(acc&0x1 != 0)
			out2.Set(acc&0x2 != 0)
			out4.Set(acc&0x4 != 0)
		} else {
			out.Set(false)
			out2.Set(false)
			out4.Set(false)
		}
	})
}

// oneshot (oneshot(9)): an edge of in (rising and/or falling, as the
// parameters say) starts a pulse of width seconds on out; time-left
// counts it down by period * 1e-9 per call. A running pulse ignores
// edges unless retriggerable. reset ends it.
func newOneshot(c *hal.Component, p string) hal.Func {
	var (
		in, reset     = c.Bit(p+".in", hal.In), c.Bit(p+".reset", hal.In)
		out, outNot   = c.Bit(p+".out", hal.Out), c.Bit(p+".out-not", hal.Out)
		width         = c.Float(p+".width", hal.In)
		timeLeft      = c.Float(p+".time-left", hal.Out)
		retriggerable = c.BitParam(p+".retriggerable", hal.RW)
		rising        = c.BitParam(p+".rising", hal.RW)
		falling       = c.BitParam(p+".falling", hal.RW)
		timer         float64
		oldIn         bool
	)
	retriggerable.Set(true)
	rising.Set(true)
	return exportInstance(c, p, func(period time.Duration, _ int64) {
		if reset.Get() {
			timer = 0.0
			oldIn = false
			out.Set(false)
			outNot.Set(true)
			return
		}
		nw, old, trigger := in.Get(), oldIn, false
		if nw && !old && rising.Get() {
			trigger = true
		}
		if old && !nw && falling.Get() {
			trigger = true
		}
		oldIn = nw
		if timer > 0.0 {
			if !retriggerable.Get() {
				trigger = false
			}
			timer -= float64(float64(period) * 0.000000001)
			if timer < 0.0 {
				timer = 0.0
			}
		}
		if trigger {
			timer = width.Get()
		}
		timeLeft.Set(timer)
		out.Set(timer > 0.0)
		outNot.Set(!(timer > 0.0))
	})
}

// flipflop (flipflop(9)): reset forces out FALSE, else set forces it
// TRUE, else a rising edge of clk copies data to it; out-not is its
// inverse. out and out-not are I/O pins, written only then.
func newFlipflop(c *hal.Component, p string) hal.Func {
	var (
		data, clk   = c.Bit(p+".data", hal.In), c.Bit(p+".clk", hal.In)
		set, reset  = c.Bit(p+".set", hal.In), c.Bit(p+".reset", hal.In)
		out, outNot = c.Bit(p+".out", hal.IO), c.Bit(p+".out-not", hal.IO)
		oldClk      bool
	)
	return exportInstance(c, p, func(time.Duration, int64) {
		clock := clk.Get()
		switch {
		case reset.Get():
			out.Set(false)
			outNot.Set(true)
		case set.Get():
			out.Set(true)
			outNot.Set(false)
		case clock && !oldClk:
			d := data.Get()
			out.Set(d)
			outNot.Set(!d)
		}
		oldClk = clock
	})
}

// edge (edge(9)): the selected edge of in (both, or falling when in-edge
// else rising) sets out TRUE for out-width-ns nanoseconds, counted down
// in time-left-ns by the period; out stays TRUE for the call that sees
// the edge even with width 0. The first call only records in.
// time-left-ns wraps as a C int32 does.
func newEdge(c *hal.Component, p string) hal.Func {
	var (
		in, out   = c.Bit(p+".in", hal.In), c.Bit(p+".out", hal.Out)
		outInvert = c.Bit(p+".out-invert", hal.Out)
		both      = c.BitParam(p+".both", hal.RW)
		inEdge    = c.BitParam(p+".in-edge", hal.RW)
		outWidth  = c.S32Param(p+".out-width-ns", hal.RW)
		timeLeft  = c.S32Param(p+".time-left-ns", hal.RO)
		lastIn    = c.BitParam(p+".last-in", hal.RO)
		first     = true
	)
	inEdge.Set(true)
	return exportInstance(c, p, func(period time.Duration, _ int64) {
		newIn := in.Get()
		tlns := timeLeft.Get()
		if tlns > 0 {
			tlns = int32(int64(tlns) - int64(period))
			timeLeft.Set(tlns)
		}
		if !first {
			rise := newIn && !lastIn.Get()
			fall := !newIn && lastIn.Get()
			var desired bool
			switch {
			case both.Get():
				desired = rise || fall
			case inEdge.Get():
				desired = fall
			default:
				desired = rise
			}
			switch {
			case desired:
				timeLeft.Set(outWidth.Get())
				out.Set(true)
			case tlns > 0:
				out.Set(true)
			default:
				timeLeft.Set(0)
				out.Set(false)
			}
		} else {
			first = false
		}
		lastIn.Set(newIn)
		outInvert.Set(!out.Get())
	})
}

// toggle (toggle(9)): in held TRUE for debounce calls toggles out once;
// in held FALSE as long re-arms it. A debounce outside 1..10000 is set
// to 2.
func newToggle(c *hal.Component, p string) hal.Func {
	var (
		in, out   = c.Bit(p+".in", hal.In), c.Bit(p+".out", hal.IO)
		debounce  = c.U32Param(p+".debounce", hal.RW)
		cntr      int32
		debounced bool
	)
	debounce.Set(2)
	return exportInstance(c, p, func(time.Duration, int64) {
		deb := debounce.Get()
		if deb < 1 || deb > 10000 {
			deb = 2
			debounce.Set(deb)
		}
		if in.Get() {
			cntr++
			if cntr >= int32(deb) {
				cntr = int32(deb)
				if !debounced {
					out.Set(!out.Get())
				}
				debounced = true
			}
		} else {
			cntr--
			if cntr <= 0 {
				cntr = 0
				debounced = false
			}
		}
	})
}

// timedelay (timedelay(9)): out follows in once in has differed from it
// for on-delay (to TRUE) or off-delay (to FALSE) seconds; elapsed is the
// timer, period * 1e-9 added per call while they differ.
func newTimedelay(c *hal.Component, p string) hal.Func {
	var (
		in, out  = c.Bit(p+".in", hal.In), c.Bit(p+".out", hal.Out)
		onDelay  = c.Float(p+".on-delay", hal.In)
		offDelay = c.Float(p+".off-delay", hal.In)
		elapsed  = c.Float(p+".elapsed", hal.Out)
		timer    float64
	)
	onDelay.Set(0.5)
	offDelay.Set(0.5)
	return exportInstance(c, p, func(period time.Duration, _ int64) {
		inV := in.Get()
		if inV != out.Get() {
			timer += float64(float64(period) * 1e-9)
			elapsed.Set(timer)
			if inV {
				if timer >= onDelay.Get() {
					out.Set(true)
					timer = 0.0
				}
			} else if timer >= offDelay.Get() {
				out.Set(false)
				timer = 0.0
			}
		} else {
			timer = 0.0
		}
	})
}

// logicMaxPersonality is halcompile's MAX_PERSONALITIES.
const logicMaxPersonality = 64

// loadLogic is logic's factory: count= or names= and personality=P0,P1
// (RTAPI_MP_ARRAY_INT, 0 for an instance not given one). More than 16
// inputs is ErrInvalid, as halcompile's -ENOSPC.
func loadLogic(h *hal.HAL, a *hal.LoadArgs) error {
	var pers [logicMaxPersonality]int32
	if err := mpIntArray(a, "personality", pers[:]); err != nil {
		return err
	}
	names, err := a.Instances(1)
	if err != nil {
		return err
	}
	c, err := h.NewComponent(a.Name)
	if err != nil {
		return err
	}
	for i, n := range names {
		pr := pers[i%logicMaxPersonality]
		if pr&0xff > 16 {
			return fmt.Errorf("loadrt logic: %s: pin in-##: requested size %d exceeds max size 16: %w", n, pr&0xff, rtapi.ErrInvalid)
		}
		newLogic(c, n, pr)
	}
	return c.Ready()
}

// logic (logic(9)): personality & 0xff inputs in-00 ..., and the outputs
// its bits ask for: and 0x100, or 0x200, xor 0x400, nand 0x800, nor
// 0x1000. With no input, and is TRUE and or FALSE.
func newLogic(c *hal.Component, p string, personality int32) hal.Func {
	ins := make([]hal.Bit, personality&0xff)
	for i := range ins {
		ins[i] = c.Bit(fmt.Sprintf("%s.in-%02d", p, i), hal.In)
	}
	var and, or, xor, nand, nor hal.Bit
	if personality&0x100 != 0 {
		and = c.Bit(p+".and", hal.Out)
	}
	if personality&0x200 != 0 {
		or = c.Bit(p+".or", hal.Out)
	}
	if personality&0x400 != 0 {
		xor = c.Bit(p+".xor", hal.Out)
	}
	if personality&0x800 != 0 {
		nand = c.Bit(p+".nand", hal.Out)
	}
	if personality&0x1000 != 0 {
		nor = c.Bit(p+".nor", hal.Out)
	}
	return exportInstance(c, p, func(time.Duration, int64) {
		a, o, x := true, false, false
		for _, in := range ins {
			if in.Get() {
				o = true
				x = !x
			} else {
				a = false
			}
		}
		if personality&0x100 != 0 {
			and.Set(a)
		}
		if personality&0x200 != 0 {
			or.Set(o)
		}
		if personality&0x400 != 0 {
			xor.Set(x)
		}
		if personality&0x800 != 0 {
			nand.Set(!a)
		}
		if personality&0x1000 != 0 {
			nor.Set(!o)
		}
	})
}

// updown (updown(9)): count goes up by one on a rising edge of countup
// and down on one of countdown (edges from the second call on); reset,
// while TRUE, holds it at 0. wrap sends it past max to min and below
// min to max; else clamp holds it in [min, max]. Without either it
// wraps as an int32 (C's overflow is undefined).
func newUpdown(c *hal.Component, p string) hal.Func {
	var (
		countup, countdown = c.Bit(p+".countup", hal.In), c.Bit(p+".countdown", hal.In)
		reset              = c.Bit(p+".reset", hal.In)
		count              = c.S32(p+".count", hal.Out)
		clampP             = c.BitParam(p+".clamp", hal.RW)
		wrap               = c.BitParam(p+".wrap", hal.RW)
		maxP               = c.S32Param(p+".max", hal.RW)
		minP               = c.S32Param(p+".min", hal.RW)
		oldUp, oldDown     bool
		first              = true
	)
	maxP.Set(0x7FFFFFFF)
	return exportInstance(c, p, func(time.Duration, int64) {
		temp := count.Get()
		if first {
			oldUp = countup.Get()
			oldDown = countdown.Get()
			first = false
		}
		if !oldUp && countup.Get() {
			temp++
		}
		if !oldDown && countdown.Get() {
			temp--
		}
		if reset.Get() {
			temp = 0
		}
		if wrap.Get() {
			if temp > maxP.Get() {
				temp = minP.Get()
			} else if temp < minP.Get() {
				temp = maxP.Get()
			}
		} else if clampP.Get() {
			if temp > maxP.Get() {
				temp = maxP.Get()
			} else if temp < minP.Get() {
				temp = minP.Get()
			}
		}
		count.Set(temp)
		oldUp = countup.Get()
		oldDown = countdown.Get()
	})
}
