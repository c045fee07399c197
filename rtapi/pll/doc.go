// Package pll locks a periodic task's or HAL thread's releases to an
// external clock: a fieldbus's distributed clock (EtherCAT DC), a
// drive's sync pulse, another machine's time. Each cycle the caller
// measures the phase error, its release (TaskContext.PLLReference or
// hal.FuncContext.PLLReference) minus the time of the external clock's
// matching event on the same clock, and passes the PI's correction to
// SetPLLCorrection, which lengthens or shortens the following periods.
//
//	var pi = pll.PI{Kp: 0.5, Ki: 0.05, Limit: 10 * time.Microsecond}
//	func sync(c *hal.FuncContext) {
//		err := c.PLLReference() - dc.LastSync() // ns, on the flavor's clock
//		_, _ = c.SetPLLCorrection(pi.Update(err))
//	}
//
// The loop settles where the correction equals the clock's drift per
// period and the phase error is zero; the integral term removes the
// drift's steady error. rtapi/hal's ExampleFuncContext_SetPLLCorrection locks a thread to a clock
// 100 ppm fast on the sim flavor. This is LinuxCNC's
// rtapi_task_pll_get_reference / rtapi_task_pll_set_correction pair,
// with the controller a HAL component would otherwise write.
package pll
