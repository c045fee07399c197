package hal_test

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// A component with a gain parameter and two pins, wired with Net to a
// second component's input, run for three cycles on the sim flavor.
func ExampleHAL_Net() {
	rt, _ := rtapi.Open(rtapi.Options{Flavor: "sim"})
	defer rt.Close()
	h, _ := hal.New(rt, hal.Options{})
	defer h.Close()

	amp, _ := h.NewComponent("amp")
	in := amp.Float("amp.0.in", hal.In)
	out := amp.Float("amp.0.out", hal.Out)
	gain := amp.FloatParam("amp.0.gain", hal.RW)
	amp.Export("amp.0", func(time.Duration, int64) { out.Set(in.Get() * gain.Get()) })
	meter, _ := h.NewComponent("meter")
	reading := meter.Float("meter.0.in", hal.In)
	if err := errorsOf(amp.Ready(), meter.Ready()); err != nil {
		panic(err)
	}

	h.NewThread("servo", time.Millisecond)
	h.AddFunct("amp.0", "servo", hal.Last)
	h.SetP("amp.0.gain", "2.5")
	h.SetP("amp.0.in", "4") // an unlinked In pin holds its own value
	if err := h.Net("volts", "amp.0.out", "meter.0.in"); err != nil {
		panic(err)
	}
	fmt.Println(h.SetP("meter.0.in", "1")) // a signal drives it now
	h.Start()
	clock, _ := sim.New(rt)
	clock.RunCycles(h.Threads()[0].Task(), 3)
	h.Stop()
	v, _ := h.GetS("volts")
	fmt.Println("volts:", v, "meter reads", reading.Get())
	// Output:
	// hal: setp: pin "meter.0.in" is connected to signal "volts" (use sets): invalid argument
	// volts: 10 meter reads 10
}

func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
