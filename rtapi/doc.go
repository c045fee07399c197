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
// Runnable examples: Example, ExampleRT_Run, ExampleRT_ShmCreate; package
// rtapi/sim's examples run tasks on virtual time; examples/twotasks is a
// complete program.
//
// Shutdown: RT.Run stops every task and closes the RT when its context
// ends or a task fails. Task.WaitContext waits for one task and stops it
// if the context ends first. Without a context: Task.Stop, Task.Wait,
// RT.Close.
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
// Settings: Options, whose zero value works; most fields can also be a
// -rtapi.* flag (RegisterFlags) or an RTAPI_* environment variable.
// Options' doc has the table and the precedence. Yes/no settings are a
// Toggle: Auto (the zero value, "not set"), On or Off.
//
// Flavor choice: Options.Flavor names one; otherwise rt-preempt on a
// PREEMPT_RT kernel where SCHED_FIFO can be set, posix elsewhere
// (Options.VanillaFIFO gives posix SCHED_FIFO threads woken by POSIX
// timers). Flavor().Why says what was detected and why. Flavor "sim"
// runs tasks on virtual time; importing package rtapi/sim registers it,
// and without the import it is ErrNotSupported.
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
// A body's panic ends that task only: Wait returns a *PanicError. A body
// that calls runtime.Goexit (testing's FailNow) ends its task: Wait
// returns ErrGoexit. On the Linux flavors each task runs on an OS thread
// of its own, never the main thread, destroyed when the task ends. The
// posix-timer wake mode blocks one real-time signal on its task threads
// (Options.TimerSignal); instances sent to the process still reach the
// program.
//
// Errors: one set of sentinels for rtapi and every package under it
// (ErrInvalid, ErrPermission, ErrNotSupported, ErrState, ErrClosed,
// ErrTimeout, ErrBusy, ErrCorrupt, ErrExist, ErrNotExist; ErrFaulted and
// ErrGoexit for how a task ended); each error matches one with errors.Is.
//
// Faults: on the real-time flavors a watchdog demotes and faults a task
// that completes no cycle within TaskSpec.Watchdog while busy on its CPU
// (a *FaultError). TaskSpec.DeadlinePolicy faults a task after a run of
// overruns or one wake-up too late (a *DeadlineError); TaskSpec.SafeState
// runs once whenever a task ends or is faulted. Stats.Interference
// attributes late wake-ups to the Go runtime or the kernel; docs/GC.md
// tells what keeps a task's latency while the rest of the process
// allocates.
//
// Building blocks, usable without an RT: rtapi/shm (named shared memory;
// RT.ShmCreate, ShmAttach and ShmNew apply this RT's settings), rtapi/ipc
// (rings, a robust mutex, a semaphore, a seqlock), rtapi/msg (the RT-safe
// message logger, RT.MsgLogger) and rtapi/hist (the histograms of Stats).
// Task.Stats is lock-free and may be read from any goroutine while the
// task runs.
package rtapi
