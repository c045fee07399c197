// Command servo is a position servo in a 1 ms HAL servo thread: a
// trapezoidal trajectory generator, the standard PID (rtapi/hal/comps'
// pid, LinuxCNC's pid(9)) with feed-forward, and a simulated motor
// (inertia, friction, a torque limit)
// integrated over the real time between cycles, so that late wake-ups
// show up as following error, as on a machine. At the end it prints the
// following-error statistics, the per-function times and the task's
// wake-up latency.
//
//	go run ./examples/servo                             # auto flavor
//	go run ./examples/servo -rtapi.vanilla-fifo         # SCHED_FIFO + POSIX timers on a non-RT kernel
//	go run ./examples/servo -moves 20,0 -vel 80
//
// On the sim flavor it runs in virtual time, deterministically, and can
// replay the wake-up latency measured on a real machine, to ask what
// following error this servo would see there:
//
//	go run ./examples/latency-test -json lat.json ...   # on the target machine
//	go run ./examples/servo -rtapi.flavor=sim -jitter lat.json
//	go run ./examples/servo -rtapi.flavor=sim -jitter examples/servo/testdata/latency-vm-fifo-1ms.json
//
// Its tests run it on the sim flavor and check the following-error bound,
// with and without wake-up jitter drawn from a latency histogram.
package main
