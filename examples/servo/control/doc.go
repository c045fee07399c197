// Package control holds the pieces of a position servo that the servo and
// halhost examples share: a trapezoidal trajectory, a PID with
// feed-forward and anti-windup, a simulated motor and following-error
// statistics. Every method is arithmetic only, and RT-safe.
package control
