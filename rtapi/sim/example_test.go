package sim_test

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// A servo loop tested on virtual time: 15 µs of wake-up jitter and a
// declared 200 µs of work per cycle, three milliseconds simulated in
// microseconds of real time, the same trace on every run.
func Example() {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	clock, err := sim.New(rt)
	if err != nil {
		fmt.Println(err)
		return
	}

	position := 0.0
	servo, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, func(c *rtapi.Cycle) {
		position += 0.5
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = clock.SetTask(servo, sim.TaskConfig{
		Jitter: sim.ConstantJitter(15 * time.Microsecond),
		Cost:   200 * time.Microsecond,
	})
	_ = servo.Start()
	if err := clock.Advance(3 * time.Millisecond); err != nil {
		fmt.Println(err)
		return
	}

	trace, _ := clock.Trace()
	fmt.Print(trace)
	st := servo.Stats()
	fmt.Printf("position %.1f after %d releases, latency %v, exec %v, overruns %d\n", position, st.Cycles,
		time.Duration(st.Latency.Max), time.Duration(st.Exec.Max), st.Overruns)
	// Output:
	// 0s servo #0 start
	// 200µs servo #0 end 200µs
	// 1.015ms servo #1 wake 15µs
	// 1.215ms servo #1 end 200µs
	// 2.015ms servo #2 wake 15µs
	// 2.215ms servo #2 end 200µs
	// position 1.5 after 2 releases, latency 15µs, exec 200µs, overruns 0
}

// RunUntil stops the simulation as soon as a condition on what the task
// bodies computed holds; RunCycles counts one task's cycles.
func ExampleController_RunUntil() {
	rt, _ := rtapi.Open(rtapi.Options{Flavor: "sim"})
	defer rt.Close()
	clock, _ := sim.New(rt)

	level := 0
	fill, _ := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "fill", Period: 2 * time.Millisecond}, func(*rtapi.Cycle) {
		level += 3
	})
	_ = fill.Start()

	err := clock.RunUntil(func() bool { return level >= 10 }, time.Second)
	fmt.Println(err, "level", level, "at", time.Duration(clock.Now()))
	_ = clock.RunCycles(fill, 5)
	fmt.Println("level", level, "at", time.Duration(clock.Now()))
	// Output:
	// <nil> level 12 at 6ms
	// level 27 at 16ms
}
