package comps

import (
	"math"
	"time"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// loadSiggen is siggen's factory: num_chan=N (or count=N) or names=a,b,
// at most 16, default 1.
func loadSiggen(h *hal.HAL, a *hal.LoadArgs) error {
	names, err := channels(a, 1)
	if err != nil {
		return err
	}
	c, err := h.NewComponent(a.Name)
	if err != nil {
		return err
	}
	for _, n := range names {
		newSiggen(c, n)
	}
	return c.Ready()
}

// siggen (siggen(9)) is a port of LinuxCNC's siggen.c: an index ramps
// from 0 to 1 once per cycle of the waveform. A frequency above half the
// thread's rate is written back to the frequency pin as that limit; a
// negative one runs the index down, unwrapped, as siggen.c does. reset
// holds the index at 0.5. The sine and cosine take siggen.c's angle,
// index * (2 * 3.1415927), through Go's math.Sin and math.Cos, which may
// differ from glibc's in the last bit.
func newSiggen(c *hal.Component, p string) {
	var (
		square, sawtooth = c.Float(p+".square", hal.Out), c.Float(p+".sawtooth", hal.Out)
		triangle, sine   = c.Float(p+".triangle", hal.Out), c.Float(p+".sine", hal.Out)
		cosine           = c.Float(p+".cosine", hal.Out)
		clock            = c.Bit(p+".clock", hal.Out)
		frequency        = c.Float(p+".frequency", hal.In)
		amplitude        = c.Float(p+".amplitude", hal.In)
		offset           = c.Float(p+".offset", hal.In)
		reset            = c.Bit(p+".reset", hal.In)
		index            float64
	)
	frequency.Set(1)
	amplitude.Set(1)
	c.Export(p+".update", func(period time.Duration, _ int64) {
		tmp1 := float64(period) * 0.000000001
		tmp2 := float64(frequency.Get() * tmp1)
		if tmp2 > 0.5 {
			frequency.Set(0.5 / tmp1)
			tmp2 = 0.5
		}
		if reset.Get() {
			index = 0.5
		} else {
			index += tmp2
		}
		if index >= 1.0 {
			index -= 1.0
		}
		if index > 0.5 {
			tmp1 = 1.0
			clock.Set(true)
		} else {
			tmp1 = -1.0
			clock.Set(false)
		}
		off, amp := offset.Get(), amplitude.Get()
		square.Set(float64(tmp1*amp) + off)
		tmp2 = float64(index*2.0) - 1.0
		sawtooth.Set(float64(tmp2*amp) + off)
		tmp2 *= 2.0
		tmp2 = float64(tmp2*tmp1) - 1.0
		triangle.Set(float64(tmp2*amp) + off)
		tmp1 = index * (2.0 * 3.1415927)
		sine.Set(float64(math.Sin(tmp1)*amp) + off)
		cosine.Set(float64(math.Cos(tmp1)*amp) + off)
	})
}
