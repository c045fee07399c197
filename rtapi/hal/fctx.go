package hal

import (
	"time"

	"github.com/gortapi/gortapi/rtapi"
)

// ContextFunc is a Func that gets the cycle's timing and the thread's PLL
// through a *FuncContext (HAL.ExportContext). Func's rules apply.
type ContextFunc func(c *FuncContext)

// FuncContext is what a ContextFunc sees of its thread's current cycle,
// valid only during the call and only for it.
// RT-safe.
type FuncContext struct {
	tc    *rtapi.TaskContext
	start int64
}

// Period is the thread's period.
func (c *FuncContext) Period() time.Duration { return c.tc.Period() }

// Start is the time the cycle began, the now a Func gets.
func (c *FuncContext) Start() int64 { return c.start }

// Now reads the flavor's clock (virtual on sim).
func (c *FuncContext) Now() int64 { return c.tc.Now() }

// Cycle is the number of the thread's releases so far in this run.
func (c *FuncContext) Cycle() int64 { return c.tc.Cycle() }

// Release is the time the cycle was released (rtapi.TaskContext.Release).
func (c *FuncContext) Release() int64 { return c.tc.Release() }

// Deadline is when the cycle must end: the next release (TaskContext.Deadline).
func (c *FuncContext) Deadline() int64 { return c.tc.Deadline() }

// Late is how late the cycle started after its release (TaskContext.Late).
func (c *FuncContext) Late() time.Duration { return c.tc.Late() }

// Missed counts releases missed before this cycle (TaskContext.Missed).
func (c *FuncContext) Missed() int64 { return c.tc.Missed() }

// PLLReference is the release time the cycle was scheduled for, which a
// PLL compares an external clock with (rtapi_task_pll_get_reference).
func (c *FuncContext) PLLReference() int64 { return c.tc.PLLReference() }

// SetPLLCorrection lengthens (positive) or shortens (negative) each of
// the thread's following periods by d, clamped to ±rtapi.PLLMaxCorrection
// of the period (rtapi_task_pll_set_correction), and returns the
// correction applied; per thread, the last call of a cycle wins. A thread
// not woken by nanosleep gets rtapi.ErrNotSupported.
func (c *FuncContext) SetPLLCorrection(d time.Duration) (time.Duration, error) {
	return c.tc.SetPLLCorrection(d)
}
