// Package control holds the pieces of a position servo that the servo and
// halhost examples share: a trapezoidal trajectory, a simulated motor and
// following-error statistics, and the PID with feed-forward and
// anti-windup that halhost's torque_pid runs (the servo example and
// simpid use the standard one, rtapi/hal/comps' pid). Every method is
// arithmetic only, and RT-safe.
package control
