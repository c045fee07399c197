// Command simpid runs a PID position loop on a simulated axis under the
// sim flavor: a 1 kHz HAL servo thread, with the standard PID
// (rtapi/hal/comps' pid, LinuxCNC's pid(9)) and feed-forward from the
// axis' model, follows a sine trajectory, woken with
// injected jitter, on virtual time — ten simulated seconds take a few
// milliseconds of real time and give the same result on every run.
//
// Usage:
//
//	simpid [-seconds 10] [-seed 1] [-jitter 30µs] [-stddev 15µs] [-rtapi.flavor sim]
//
// It prints the largest and RMS following error after the first 100 ms
// (the loop settling), the servo task's latency and execution-time
// statistics, and the simulation's trace digest. With -rtapi.flavor posix
// or rt-preempt the same loop runs on the real clock (jitter then comes
// from the machine, not the flags) for -seconds of real time.
//
// The axis is a 1 kg carriage with 5 N·s/m of viscous friction, driven by
// a force command and integrated in 10 µs steps up to the instant the
// servo samples it. The servo computes the desired position at its
// release time (what it believes the time is) but samples the axis when it
// actually wakes, so wake-up jitter turns into following error: about
// velocity × lateness. The test asserts a bound on it over ten simulated
// seconds, bit-for-bit reproducible.
package main
