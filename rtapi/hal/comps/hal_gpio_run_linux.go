package comps

import (
	"errors"
	"time"

	"github.com/gortapi/gortapi/internal/gpio"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// hal_gpio's hot path: hal_gpio.read, hal_gpio.write and hal_gpio.reset.
// Each is one ioctl per request (one per chip and direction, per 64
// lines), walks slices made at load time and allocates nothing: no lock,
// map or interface call between wake-up and sleep.

// halGPIO is hal_gpio.c's hal_gpio_t.
type halGPIO struct {
	in, out     []gpioBank
	resetActive bool
	resetNS     hal.U32 // hal_gpio.reset_ns, when resetActive
	lastWrite   int64   // hal_gpio.c's last_reset: when write last ran
}

// gpioBank is one request: hal_gpio.c's hal_gpio_bulk_t, its vals and
// flags as bit masks.
type gpioBank struct {
	lines  *gpio.Lines
	names  []string
	pins   []hal.Bit // NAME-in or NAME-out, by line
	nots   []hal.Bit // NAME-in-not (inputs)
	mask   uint64    // every line of the request
	invert uint64    // outputs in invert=
	reset  uint64    // outputs in reset=
	vals   uint64    // outputs: what write or reset drove last
}

// The errors a hot-path function panics with, made once. hal_gpio.c
// ignores a failed read or write; gortapi faults the thread instead
// (docs/LINUXCNC.md), so that its safe states run.
var (
	errGPIORead  = errors.New("hal_gpio.read: GPIO_V2_LINE_GET_VALUES_IOCTL failed")
	errGPIOWrite = errors.New("hal_gpio.write: GPIO_V2_LINE_SET_VALUES_IOCTL failed")
)

// read is hal_gpio_read: NAME-in takes each input line's value and
// NAME-in-not its negation (invert= does not apply to inputs, as in
// hal_gpio.c).
// RT-safe.
func (g *halGPIO) read(time.Duration, int64) {
	for i := range g.in {
		b := &g.in[i]
		bits, err := b.lines.Get()
		if err != nil {
			panic(errGPIORead)
		}
		for j, p := range b.pins {
			v := bits>>j&1 != 0
			p.Set(v)
			b.nots[j].Set(!v)
		}
	}
}

// write is hal_gpio_write: each output line takes its NAME-out pin,
// negated when in invert=; it records the time for reset.
// RT-safe.
func (g *halGPIO) write(c *hal.FuncContext) {
	g.writeLines()
	g.lastWrite = c.Now()
}

// writeLines is write but for the time.
// RT-safe.
func (g *halGPIO) writeLines() {
	for i := range g.out {
		b := &g.out[i]
		var bits uint64
		for j, p := range b.pins {
			if p.Get() {
				bits |= 1 << j
			}
		}
		bits ^= b.invert
		b.vals = bits
		if b.lines.Set(bits, b.mask) != nil {
			panic(errGPIOWrite)
		}
	}
}

// gpioStalledReads is how many equal clock reads in a row end reset's
// wait: the sim flavor's clock does not move within a cycle.
const gpioStalledReads = 1000

// reset is hal_gpio_reset: each line in reset= goes to its inactive level
// (low, or high when in invert=), the others keep what write drove, once
// hal_gpio.reset_ns (clamped to a quarter period) has passed since write:
// it busy-waits for it, as hal_gpio.c does.
// RT-safe.
func (g *halGPIO) reset(c *hal.FuncContext) {
	period := int64(c.Period())
	for i := range g.out {
		b := &g.out[i]
		b.vals = b.vals&^b.reset | b.reset&b.invert
		if int64(g.resetNS.Get()) > period/4 {
			g.resetNS.Set(uint32(period / 4))
		}
		deadline := g.lastWrite + int64(g.resetNS.Get())
		for now, same := c.Now(), 0; now < deadline && same < gpioStalledReads; {
			if t := c.Now(); t == now {
				same++
			} else {
				now, same = t, 0
			}
		}
		if b.lines.Set(b.vals, b.mask) != nil {
			panic(errGPIOWrite)
		}
	}
}
