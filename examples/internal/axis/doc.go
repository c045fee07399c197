// Package axis simulates the servo axis that the servo and halhost
// examples drive: a trapezoidal trajectory, a motor with its load and
// drive, and following-error statistics. Both close the loop with the
// standard PID, rtapi/hal/comps' pid. Every method is arithmetic only,
// and RT-safe.
package axis
