package rtapi_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gortapi/gortapi/rtapi"
)

// A 1 kHz servo task that ends itself after ten cycles. Unprivileged it
// runs on the posix flavor, as here; Options{} picks the best flavor the
// kernel allows. On the sim flavor the same task runs on virtual time,
// driven by package rtapi/sim (see its examples).
func Example() {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()

	position := 0.0
	servo, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond},
		func(tc *rtapi.TaskContext) error {
			for tc.WaitPeriod() { // sleep to the next release
				position += 0.25 // read inputs, compute, write outputs: no allocation
				if tc.Cycle() == 10 {
					return nil // the move is done
				}
			}
			return nil // stopped
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := servo.Start(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("wait:", servo.Wait())
	st := servo.Stats()
	fmt.Printf("%s: %d releases, position %.2f\n", st.Name, st.Cycles, position)
	// Output:
	// wait: <nil>
	// servo: 10 releases, position 2.50
}

// Run is a host's main loop: it returns when its context ends (Ctrl-C
// with signal.NotifyContext) or, as here, when a task fails, and then
// stops every task and closes the RT.
func ExampleRT_Run() {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	if err != nil {
		fmt.Println(err)
		return
	}
	errLimit := errors.New("position limit reached")
	position := 0.0
	axis, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "axis", Period: time.Millisecond}, func(c *rtapi.Cycle) {
		position += 0.25
		if position >= 1 {
			c.Stop(errLimit) // the task ends with this error after this cycle
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := axis.Start(); err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = rt.Run(ctx) // in a program: signal.NotifyContext(ctx, os.Interrupt)
	fmt.Println("limit:", errors.Is(err, errLimit), "position:", position)
	// Output:
	// limit: true position: 1
}
