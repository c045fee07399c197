package rtapi

// Cycle is what a NewPeriodicTask function sees each cycle. It is only
// valid during the call.
// RT-safe.
type Cycle struct {
	tc  *TaskContext
	err error
}

// Now reads the flavor's clock in nanoseconds.
func (c *Cycle) Now() int64 { return c.tc.Now() }

// Release is this cycle's release time (TaskContext.Release).
func (c *Cycle) Release() int64 { return c.tc.release }

// Deadline is the time this cycle must end by: the next release
// (TaskContext.Deadline).
func (c *Cycle) Deadline() int64 { return c.tc.Deadline() }

// Number is the cycle's number, from 0.
func (c *Cycle) Number() int64 { return c.tc.cycle }

// Context gives the full TaskContext (PLL, Resync).
func (c *Cycle) Context() *TaskContext { return c.tc }

// Stop ends the task after this cycle; Wait then returns err (nil for a
// clean stop).
func (c *Cycle) Stop(err error) {
	c.err = err
	c.tc.task.ctl.Or(ctlStop)
}

// NewPeriodicTask creates a periodic task whose loop the runtime owns: fn
// runs once per period until the task stops. A period that is not
// positive gives ErrInvalid; a nil fn panics.
func (rt *RT) NewPeriodicTask(spec TaskSpec, fn func(c *Cycle)) (*Task, error) {
	if fn == nil {
		panic("rtapi: RT.NewPeriodicTask called with a nil function")
	}
	if spec.Period <= 0 {
		return nil, taskErrf(spec.Name, "new", ErrInvalid, "a periodic task needs a positive period, not %v", spec.Period)
	}
	return rt.NewTask(spec, func(tc *TaskContext) error {
		c := Cycle{tc: tc}
		for {
			fn(&c)
			if c.err != nil || !tc.WaitPeriod() {
				return c.err
			}
		}
	})
}
