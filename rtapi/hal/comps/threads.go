package comps

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// loadThreads is threads' factory, as LinuxCNC's threads.c: nameN= and
// periodN= (ns) for N = 1, 2, 3, with name1=thread1 period1=1000000 and
// no thread 2 or 3 by default. A thread is made, in the order 1, 2, 3,
// only if its period is positive and its name not empty; others are
// skipped without a word. fpN= is taken and ignored (deprecated there).
// As in LinuxCNC, threads go fastest first: a period shorter than the
// first thread's is refused (hal.NewThread).
func loadThreads(h *hal.HAL, a *hal.LoadArgs) error {
	type spec struct {
		name   string
		period int64
	}
	var specs [3]spec
	for i := range specs {
		n := i + 1
		name, ok := a.Get(fmt.Sprintf("name%d", n))
		defPeriod := int64(0)
		if n == 1 {
			defPeriod = 1000000
			if !ok {
				name = "thread1"
			}
		}
		period, err := a.Int(fmt.Sprintf("period%d", n), defPeriod)
		if err != nil {
			return err
		}
		if _, err := a.Int(fmt.Sprintf("fp%d", n), 1); err != nil {
			return err
		}
		specs[i] = spec{name, period}
	}
	c, err := h.NewComponent("threads")
	if err != nil {
		return err
	}
	for _, s := range specs {
		if s.period > 0 && s.name != "" {
			if _, err := h.NewThread(s.name, time.Duration(s.period)); err != nil {
				return err
			}
		}
	}
	return c.Ready()
}
