// Command halhost is a small HAL component host. A signal generator, the
// standard PID, a charge pump, a simulated motor with an encoder and its
// drive, and a scope run as functions on a fast base thread and a 1 ms
// servo thread, wired by a .hal file of its own (halhost.hal, built in;
// -hal FILE loads another). Their pins, parameters and signals are the
// library's (rtapi/hal), in a shared-memory data segment; the threads
// publish their timing in a stats segment. Run examples/halmon in a
// second terminal to watch both live, and examples/halcmd to show, set
// and rewire pins.
//
//	go run ./examples/halhost                        # Ctrl-C to stop
//	go run ./examples/halmon                         # in another terminal
//	go run ./examples/halcmd show pin pid.0
//	go run ./examples/halhost -fault-after 3s        # a servo function panics: safe states, amp-enable drops
//	go run ./examples/halcmd gets amp-enable
//
// Threads and functions:
//
//	base  (100 µs)  motor.0.update, motor_encoder.0.update
//	servo (1 ms)    siggen.0.update, pid.0.do-pid-calcs, charge-pump, scope.0.sample
//
// The PID is rtapi/hal/comps' pid (LinuxCNC's pid(9)), instance pid.0:
// it follows the standard siggen's sine with the encoder's position as
// feedback, with feed-forward of the axis' viscous friction (FF1) and
// inertia (FF2) from the command's derivatives, and its output is the
// motor's torque. The motor (with its drive) runs on the base thread.
// Values cross threads through signals, atomic 64-bit words. The drive
// runs only while the signal amp-enable is TRUE (halhost.hal sets it;
// pid.0.enable reads it too). halhost.hal gives the servo thread two safe
// states (safep lines): when the thread faults (-fault-after: a function
// panics) or stops, they set pid.0.enable, and so the signal amp-enable,
// FALSE and pid.0.output (signal torque) to 0, on the thread after its
// last cycle; the base thread's drive and other processes (halcmd getp,
// halmon) see the values, and halhost names the safe states that ran.
// The drive also has a watchdog on its heartbeat, the standard
// charge_pump's square wave, for a servo thread that hangs without
// faulting: it drops the torque and clears motor.0.enabled. halhost's own
// components (motor, motor_encoder, scope, fault) are registered beside
// rtapi/hal/comps' standard ones, so a -hal file may use either.
//
// Segments: "HALP" (-pins-key) holds the pins, "HALH" (-stats-key) the
// thread statistics; halrun's defaults differ, so both run at once. Both
// are created exclusively: a second halhost on the same keys is refused
// with the running one's pid (a dead one's are replaced). With
// -rtapi.shm-group G both are mode 0660 of group G, so G's members can
// run halmon and halcmd. halhost serves halcmd's socket for its instance
// unless another host (halrun) holds it, and says so.
//
// Ctrl-C (or SIGTERM) stops the threads together, prints their final
// timing, removes both segments and exits 0.
//
// SIGUSR1 prints each thread's wake-up latency since the previous SIGUSR1
// (since the start for the first), "halhost: mark N: thread NAME
// wake-up latency: ...", and starts a new window: a benchmark
// (examples/halweb/bench.sh) measures from after what it set up to before
// it tears it down. A window's max is exact when it is the run's worst so
// far, else the upper edge of its highest 1 µs bucket (rtapi/hist
// Snapshot.Sub).
package main
