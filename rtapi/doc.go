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
// Without RT.Run, shut down with Task.Stop, Task.Wait (or WaitContext)
// and RT.Close. examples/twotasks is a complete program.
//
// Mapping to LinuxCNC's rtapi.h: Open/Close = rtapi_init/rtapi_exit;
// RT.Now = rtapi_get_time; Delay/DelayMax = rtapi_delay/rtapi_delay_max;
// PrioHighest, PrioLowest, PrioNextHigher, PrioNextLower = rtapi_prio_*;
// NewTask = rtapi_task_new (created paused); Task.Start, Pause, Resume,
// Delete = rtapi_task_start, pause, resume, delete (Pause works; LinuxCNC
// uspace returns ENOSYS); TaskContext.WaitPeriod = rtapi_wait; Resync =
// rtapi_task_self_resync; PLLReference and SetPLLCorrection =
// rtapi_task_pll_get_reference and rtapi_task_pll_set_correction;
// Kernel().Kind = rtapi_get_realtime_type; Flavor().RealTime =
// rtapi_is_realtime.
//
// Settings: Options, whose zero value works; most fields can also be a
// -rtapi.* flag (RegisterFlags) or an RTAPI_* environment variable.
//
// Flavor choice: Options.Flavor names one; otherwise rt-preempt on a
// PREEMPT_RT kernel where SCHED_FIFO can be set, posix elsewhere.
// Flavor().Why says why. Flavor "sim" runs tasks on virtual time; importing
// package rtapi/sim registers it.
//
// Time: an instant is int64 nanoseconds of the RT's clock: CLOCK_MONOTONIC,
// or the virtual clock on sim (RT.Now, TaskContext.Now, Release, Deadline,
// PLLReference, the ipc deadlines). The package-level Now is always
// CLOCK_MONOTONIC. A span (period, latency, timeout) is a time.Duration.
//
// Real-time safety: a doc comment in gortapi that ends with the line
// "RT-safe." marks what a task body may call. Such a call allocates
// nothing, takes no lock that a thread outside the real-time tasks can
// hold, makes no system call that blocks (except a sleep or wait its doc
// names, as WaitPeriod's) and returns in bounded time; on a type, the line
// covers every method. What lacks the line is set-up code: call it from
// ordinary goroutines. The methods of TaskContext and Cycle, Now and Delay
// are RT-safe; everything on RT and Task is set-up code.
//
// A body's panic or runtime.Goexit ends that task only (Wait returns a
// *PanicError or ErrGoexit). On the Linux flavors each task runs on an OS
// thread of its own, never the main thread, destroyed when the task ends.
//
// Errors: one set of sentinels for rtapi and every package under it
// (ErrInvalid, ErrPermission, ErrNotSupported, ErrState, ErrClosed,
// ErrTimeout, ErrBusy, ErrCorrupt, ErrExist, ErrNotExist; ErrFaulted and
// ErrGoexit for how a task ended); each error matches one with errors.Is.
//
// Faults: a runaway task is faulted by the watchdog (TaskSpec.Watchdog),
// a late one by its TaskSpec.DeadlinePolicy; TaskSpec.SafeState runs once
// whenever a task ends or is faulted. Options.RuntimeGuard keeps a task's
// latency while the rest of the process allocates (docs/GC.md).
//
// Building blocks, usable without an RT: rtapi/shm (named shared memory,
// RT.ShmNew), rtapi/ipc (rings, a robust mutex, a semaphore, a seqlock),
// rtapi/msg (the message logger, RT.MsgLogger) and rtapi/hist (the
// histograms of Task.Stats).
package rtapi
