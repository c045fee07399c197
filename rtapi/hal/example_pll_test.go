package hal_test

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/pll"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// A HAL function locks its thread's phase to an external clock, as an
// EtherCAT distributed-clock sync does. The simulated clock's sync events
// come every 1 ms of its own time, which runs 100 ppm slow against the
// thread's clock, and start 30 µs after the thread's first release. The PI
// drives SetPLLCorrection: the phase error goes to zero and the
// correction settles at the drift, 100 ns per period.
func ExampleFuncContext_SetPLLCorrection() {
	rt, _ := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	defer rt.Close()
	h, _ := hal.New(rt, hal.Options{})
	defer h.Close()
	clock, _ := sim.New(rt)
	_, _ = h.NewThread("servo", time.Millisecond)

	const period = int64(time.Millisecond)
	pi := pll.PI{Kp: 0.5, Ki: 0.05, Limit: time.Duration(float64(period) * rtapi.PLLMaxCorrection)}
	var first int64
	// syncEvent is the external clock's k-th sync event, on the thread's clock.
	syncEvent := func(k int64) int64 { return first + 30_000 + k*period + k*period/10_000 }
	_, _ = h.ExportContext("dcsync.0.sync", func(c *hal.FuncContext) {
		if c.Cycle() == 0 {
			first = c.PLLReference()
		}
		phase := c.PLLReference() - syncEvent(c.Cycle())
		applied, err := c.SetPLLCorrection(pi.Update(phase))
		if err != nil {
			panic(err) // the sim's nanosleep wake mode supports the PLL
		}
		switch c.Cycle() {
		case 0, 10, 50, 100, 1000:
			fmt.Printf("cycle %4d: phase error %8v, correction %v\n", c.Cycle(), time.Duration(phase), applied)
		}
	})
	_ = h.AddFunct("dcsync.0.sync", "servo", hal.Last)
	_ = h.Start()
	_ = clock.Advance(1001 * time.Millisecond)
	_ = h.Stop()
	// Output:
	// cycle    0: phase error    -30µs, correction 10µs
	// cycle   10: phase error   1.12µs, correction 16ns
	// cycle   50: phase error     10ns, correction 99ns
	// cycle  100: phase error       0s, correction 100ns
	// cycle 1000: phase error       0s, correction 100ns
}
