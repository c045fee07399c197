// Command gcbench measures what the Go garbage collector does to a
// gortapi real-time task, and what each mitigation buys, side by side
// with cyclictest in one run.
//
//	go run ./examples/gcbench            # the whole matrix, 10 s a row
//	go run ./examples/gcbench -d 20s -only 'quiet|all'
//
// Every row is a fresh process (GODEBUG settings only take effect at
// start): a 1 kHz SCHED_FIFO task (rt-preempt flavor, priority 98, pinned
// to the last CPU, empty body: nothing allocates in it) measured while
// goroutines in the same process allocate -alloc bytes a second into a
// -live heap, one mitigation switched on at a time. Two cyclictest rows
// (-p 98 -i 1000 -m, same CPU) give the reference: quiet, and with the
// same allocation load running in another process, which separates what
// the load does to the machine from what the Go runtime does to a thread
// of its own process.
//
// For each row it prints wake-up latency percentiles, the ratio of p99
// and p99.9 to quiet cyclictest, the task's interference counters
// (rtapi.Stats.Interference), and the runtime's own view from
// runtime/metrics: GC cycles, the worst stop-the-world pause, the p99 of
// goroutine scheduling latency, and the allocation rate achieved.
//
// Rows (-only selects them by regular expression):
//
//	cyclictest quiet | cyclictest +load elsewhere | gortapi quiet |
//	gortapi +alloc | +raw-sleep | +gomaxprocs | +raw-sleep+gomaxprocs |
//	+gogc400 | +memlimit | +asyncpreemptoff | +gcshrinkstackoff |
//	+pin-rest | defaults quiet | defaults +alloc | defaults +pin-rest
//
// "gortapi" rows run with the GC shield off (RTAPI_RUNTIME_GUARD=off) and
// add one mitigation each; "defaults" rows are what the real-time flavors
// apply by themselves. "+pin-rest" confines every other thread of the
// process (GC workers, the load) to the other CPUs. -json writes every
// row's figures to a file; -trace FILE records an execution trace of the
// one row -only selects, for go tool trace.
//
// It needs root (or CAP_SYS_NICE) and cyclictest on the PATH; without
// cyclictest the gortapi rows still run and ratios are left out.
package main
