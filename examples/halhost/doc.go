// Command halhost is a small HAL component host. A signal generator, a
// PID, a simulated motor with an encoder, and a scope run as functions on
// a fast base thread and a 1 ms servo thread; their pins live in a
// shared-memory segment, and the threads publish their timing in another.
// Run examples/halmon in a second terminal to watch both live.
//
//	go run ./examples/halhost                        # Ctrl-C to stop
//	go run ./examples/halmon                         # in another terminal
//	go run ./examples/halhost -fault-after 3s        # a function panics: its thread stops, the host reports it
//
// Threads and functions:
//
//	base  (100 µs)  motor.0.update, encoder.0.update
//	servo (1 ms)    siggen.0.update, pid.0.do-pid-calcs, scope.0.sample
//
// The PID follows the signal generator's sine with the encoder's position
// as feedback; the motor (with its drive) runs on the base thread. Each pin
// is written by one function and read by others across threads as an
// atomic 64-bit word; the scope publishes a frame of all pins through a
// seqlock every servo cycle. The drive has a watchdog on the PID's
// heartbeat pin: when the servo thread stops (-fault-after), it drops the
// torque and clears motor.0.enabled.
//
// Ctrl-C (or SIGTERM) stops the threads together, prints their final
// timing, removes both segments and exits 0.
package main
