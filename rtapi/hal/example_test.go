package hal_test

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// A base thread and a servo thread, each calling the functions components
// exported, run for one millisecond of virtual time on the sim flavor.
func Example() {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{})
	if err != nil {
		panic(err)
	}
	defer h.Close()

	base, _ := h.NewThread("base", 500*time.Microsecond)    // fixes the base period
	servo, _ := h.NewThread("servo", 1100*time.Microsecond) // rounded to a multiple of it
	fmt.Println("servo period:", servo.Period(), "asked:", servo.Requested())

	var count int
	h.Export("encoder.0.update", func(period time.Duration, now int64) { count++ })
	h.Export("pid.0.do-pid-calcs", func(period time.Duration, now int64) {
		fmt.Printf("pid at %v, every %v, after %d encoder updates\n", time.Duration(now), period, count)
	})
	h.AddFunct("encoder.0.update", "base", hal.Last)
	h.AddFunct("pid.0.do-pid-calcs", "servo", hal.Last)

	if err := h.Start(); err != nil {
		panic(err)
	}
	clock, _ := sim.New(rt)
	clock.AdvanceTo(int64(2 * time.Millisecond))
	if err := h.Stop(); err != nil {
		panic(err)
	}
	fmt.Println("priorities: base", base.Priority(), "> servo", servo.Priority())
	s := servo.Stats()
	fmt.Println(s.Name, "beat", s.Beat, "functions", servo.Functs())
	// Output:
	// servo period: 1ms asked: 1.1ms
	// pid at 0s, every 1ms, after 1 encoder updates
	// pid at 1ms, every 1ms, after 3 encoder updates
	// pid at 2ms, every 1ms, after 5 encoder updates
	// priorities: base 98 > servo 97
	// servo beat 3 functions [pid.0.do-pid-calcs]
}
