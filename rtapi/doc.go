// Package rtapi is gortapi's public API: an RTAPI (LinuxCNC, Machinekit)
// for Go. It runs periodic real-time tasks on their own OS threads, with
// priorities, overrun accounting and per-task latency statistics, on the
// best backend ("flavor") the running kernel allows.
//
//	rt, err := rtapi.Open(rtapi.Options{})            // rtapi_init
//	defer rt.Close()                                   // rtapi_exit
//	servo, err := rt.NewTask(rtapi.TaskSpec{           // rtapi_task_new
//		Name: "servo", Period: time.Millisecond,
//	}, func(tc *rtapi.TaskContext) error {
//		for tc.WaitPeriod() {                          // rtapi_wait
//			// read inputs, compute, write outputs
//		}
//		return nil
//	})
//	err = servo.Start()                                // rtapi_task_start
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
//	defer stop()
//	err = rt.Run(ctx) // until Ctrl-C or a task fails; then stops the tasks and closes
//
// Runnable examples: Example (a servo task), ExampleRT_Run (a host's main
// loop ended by a failing task) and ExampleRT_ShmCreate (state shared with
// another process); package rtapi/sim's examples run tasks on virtual
// time; examples/twotasks is a complete program.
//
// Shutdown: RT.Run ties the RT to a context.Context: when the context
// ends or a task fails, it stops every task and closes the RT.
// Task.WaitContext waits for one task and stops it if the context ends
// first. Without a context: Task.Stop, then Task.Wait, then RT.Close.
//
// Mapping to LinuxCNC's rtapi.h: Open/Close = rtapi_init/rtapi_exit;
// Now = rtapi_get_time; Delay/DelayMax = rtapi_delay/rtapi_delay_max;
// PrioHighest, PrioLowest, PrioNextHigher, PrioNextLower = rtapi_prio_*;
// NewTask = rtapi_task_new (created paused); Task.Start, Pause, Resume,
// Delete = rtapi_task_start, pause, resume, delete (Pause works; LinuxCNC
// uspace returns ENOSYS); TaskContext.WaitPeriod = rtapi_wait; Resync =
// rtapi_task_self_resync; PLLReference and SetPLLCorrection =
// rtapi_task_pll_get_reference and rtapi_task_pll_set_correction;
// Kernel().Kind = rtapi_get_realtime_type; Flavor().RealTime =
// rtapi_is_realtime.
//
// Settings: Options, whose zero value works. Most of its fields can also
// be given as a -rtapi.* flag (RegisterFlags) or an RTAPI_* environment
// variable, read by one parser for both; a field set in code beats its
// flag, a flag given explicitly (even -rtapi.strict=false) beats the
// environment, and the environment beats the default. Options' doc has
// the table. Yes/no settings are a Toggle, whose zero value Auto
// means "not set"; rtapi's Auto, On and Off are its values.
//
// Flavor choice: Options.Flavor, the -rtapi.flavor flag or RTAPI_FLAVOR
// names one; otherwise rt-preempt on a PREEMPT_RT kernel where SCHED_FIFO
// can be set, posix elsewhere. On a vanilla or PREEMPT kernel, VanillaFIFO
// switches posix to SCHED_FIFO threads woken by POSIX timers aimed at them; without the
// permission it keeps running SCHED_OTHER and warns, unless Strict.
// Flavor().Why says what was detected and why the choice was made.
// Flavor "sim" runs tasks on virtual time for tests: package rtapi/sim
// registers it when imported (as a database/sql driver) and drives its
// clock; without the import, asking for "sim" is ErrNotSupported. Code under test reads time through RT.Now or its
// TaskContext (or Cycle), which are virtual on sim; the package-level Now
// is always CLOCK_MONOTONIC.
//
// Time: an instant is int64 nanoseconds of the RT's clock —
// CLOCK_MONOTONIC, or the virtual clock on sim — as Now, RT.Now,
// TaskContext.Now, Release and Deadline, PLLReference, the ipc deadlines and
// sim.Controller.AdvanceTo read and take it; a span (period, latency,
// histogram value, correction, timeout) is a time.Duration.
//
// Real-time safety: a doc comment in gortapi that ends with the line
// "RT-safe." marks what a task body may call. Such a call allocates
// nothing, takes no lock that a thread outside the real-time tasks can
// hold, makes no system call that blocks (except a sleep or wait its doc
// names, as WaitPeriod's) and returns in bounded time; on a type, the line
// covers every method. What lacks the line is set-up code: call it from
// ordinary goroutines. The methods of TaskContext and Cycle, Now and Delay
// are RT-safe; everything on RT and Task is set-up code. A body's panic ends that task only: Wait returns a
// *PanicError and the other tasks keep running. A body that calls
// runtime.Goexit (testing's FailNow, testify's require) ends its task too:
// Wait returns ErrGoexit.
//
// On the Linux flavors each task runs on an OS thread of its own, never
// the process's main thread (where the kernel sends process-directed
// signals), and the thread is destroyed when the task ends, so no thread
// stays real-time (sim's virtual threads are ordinary goroutines). Stop and
// Pause reach a sleeping task at once in every wake mode. The posix-timer
// wake mode blocks one real-time signal on its task threads
// (Options.TimerSignal, DefaultTimerSignal = 40); instances of that signal
// sent to the process still reach the program.
//
// Errors: one set of sentinels for rtapi and every package under it
// (ErrInvalid, ErrPermission, ErrNotSupported, ErrState, ErrClosed,
// ErrTimeout, ErrBusy, ErrCorrupt, ErrExist, ErrNotExist; ErrFaulted and
// ErrGoexit for how a task ended); each error matches one with errors.Is.
//
// On the real-time flavors a watchdog thread at priority 99 watches every
// task: one that completes no cycle within TaskSpec.Watchdog while busy on
// its CPU is demoted to SCHED_OTHER and faulted (Wait returns a
// *FaultError), so a runaway loop cannot freeze a core. A task's
// TaskSpec.DeadlinePolicy faults it after a run of overruns or one
// wake-up too late (a *DeadlineError), and its TaskSpec.SafeState runs
// once whenever it ends or is faulted. TaskContext.Late and Missed say
// how late the current cycle started and how many releases it missed,
// as Xenomai's rt_task_wait_period does. Each task's
// Stats.Interference counts the cycles the Go runtime or the kernel
// disturbed (preempted, parked by the Go scheduler, during GC, page
// faults) and attributes late wake-ups to them; docs/GC.md tells what
// keeps a task's latency while the rest of the process allocates.
//
// The building blocks live in packages of their own, usable without an RT:
// rtapi/shm maps named shared-memory segments (RT.ShmCreate, ShmAttach
// and ShmNew open them with this RT's instance and trust settings);
// rtapi/ipc has what lives in them — record and stream rings, a mutex
// that detects a dead owner, a semaphore, a seqlock; rtapi/msg is the
// RT-safe message logger (RT.MsgLogger); rtapi/hist is the latency
// histogram of Stats.
//
// Statistics (Task.Stats) are lock-free and may be read from any goroutine
// while the task runs: cycles, overruns, wake-up latency and execution
// time as histograms with 1 µs buckets, and the thread's context switches
// and page faults.
package rtapi
