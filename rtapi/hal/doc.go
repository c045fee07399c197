// Package hal runs LinuxCNC HAL-style threads: a few periodic real-time
// threads (a fast base thread, a 1 ms servo thread, ...), each calling an
// ordered chain of functions that components export, every call timed.
//
//	h, err := hal.New(rt, hal.Options{})                      // one per rtapi.RT
//	base, err := h.NewThread("base", 50*time.Microsecond)     // fixes the base period
//	servo, err := h.NewThread("servo", time.Millisecond)      // a multiple of it
//	_, err = h.Export("pid.0.do-pid-calcs", pid.Update)       // hal_export_funct
//	err = h.AddFunct("pid.0.do-pid-calcs", "servo", hal.Last) // hal_add_funct_to_thread
//	err = h.Start()                                           // hal_start_threads
//	defer h.Close()
//
// # Threads
//
// The first thread fixes the base period. Later periods are rounded to the
// nearest whole multiple of it (Thread.Requested keeps what was asked, and
// the rounding is logged); a period shorter than the base is refused.
// Threads are created in any order. NewThread's threads, and those whose
// ThreadSpec.Priority is RateMonotonic, get their priorities at Start (the
// fastest thread gets rtapi's highest priority, each slower one
// rt.PrioNextLower of the one before); a ThreadSpec may give one instead. Start and Stop act on all threads together. Each thread is an
// rtapi task on its own OS thread, so it runs on every flavor — on the sim
// flavor deterministically, in virtual time.
//
// # Functions
//
// A function is a Func, func(period time.Duration, now int64), exported
// under a unique name and added to one thread at a Position (First, Last
// or At(i)). Each cycle a thread calls its chain in order with its period
// and the time the cycle began. Adding and removing functions while the
// threads run is safe: the chain is copied on write and swapped
// atomically, so a change takes effect at the next cycle boundary, never
// mid-chain; RemoveFunct returns only once the thread has left any cycle
// that still used the old chain, so the removed function is not called
// again after it returns.
//
// # Timing
//
// Every call is timed with the flavor's clock: per function the last
// and the worst time (LinuxCNC's .time and .tmax), calls and overruns;
// per thread the chain's total time and worst, overruns and the
// thread-beat (completed cycles). A call overruns when it ends after the
// next release was due and either began before it or alone lasted longer
// than the period: the count names the function that made the thread
// late, not the ones that merely ran late behind it. All counters are
// atomics, readable from any goroutine while the threads run
// (Thread.Stats, HAL.Stats).
//
// On the sim flavor a thread's functions run in virtual time, in
// priority order at each instant, identically on every run. The flavor
// charges a task's declared cost after its body, so the chain itself takes
// no virtual time there: function and chain times read 0, and injected
// overruns show in the thread's task statistics (Thread.Task().Stats()).
//
// With Options.StatsKey set, the counters live in a shared-memory segment
// ("/gortapi-<instance>-<key>") that another process can watch without
// taking any lock the real-time side could wait on (OpenMonitor, and
// examples/halmon): every exported function's counters are updated there
// in place after each call, and each thread publishes its own record — its
// timing and its chain — through a seqlock about once a millisecond
// (Options.PublishEvery). A publication's cost does not grow with the
// chain (docs/BENCHMARKS.md).
//
// # Components, pins, parameters and signals
//
// A Component (NewComponent, LinuxCNC's hal_init) makes pins of type bit,
// float, s32, u32, s64 or u64 and direction In, Out or IO, and parameters
// RO or RW, then calls Ready. Each returns a handle (Bit, Float, S32, ...)
// whose Get and Set a function calls every cycle: two atomic loads, or a
// load and an atomic store of one 64-bit word, with no lock, allocation,
// interface call or map lookup, atomic on 32-bit systems too. The zero
// handle is not usable, nor is any handle after HAL.Close, which unmaps the
// values. Net links pins to a signal (at most one Out writer, and not
// beside IO pins; a type mismatch or a second writer is refused with an
// error naming both pins); Unlink, SetP, GetP, SetS and GetS are halcmd's
// unlinkp, setp, getp, sets and gets. An unlinked In pin reads its own
// value, which SetP sets. A change of links (Net, Link, Unlink,
// DeleteSignal) made while threads run takes effect between cycles, for all
// its pins at once: no cycle sees it half made, and no thread waits for the
// host (links.go says how). It returns once every running thread has left
// the cycle it was in.
//
// The values live in fixed-size tables of a data segment
// (Options.DataKey) that another process reads and sets through
// AttachData; examples/halcmd does. The host never reads back from it
// anything but values, so a hostile writer can only produce wrong values.
// One that truncates the file makes the host's next access to it fault:
// a function's pin access (its call ends there, as if it panicked), a
// safe state's or a set-up call's. The host then makes the segment
// private memory at the same addresses and goes on: the threads keep
// running, values past the file's new end read zero, HAL.DataErr and
// Close report shm.ErrTruncated, and readers in other processes get
// shm.ErrTruncated and see the host gone. Pin handles used from other
// goroutines of the host are not guarded: such an access faults the
// process.
//
// Components are compiled in: Register names a Factory, LoadRT ("loadrt
// pid count=2") runs it; rtapi/hal/comps registers the standard ones.
// Exec and Load run commands parsed by rtapi/hal/halfile (a .hal file);
// Show and Save print what halcmd's show and save print. Package
// rtapi/hal/control serves those commands to examples/halcmd; package
// rtapi/hal/sampler is the sampler component, whose ring another process
// reads every cycle of (Component.NewSegment makes such segments).
//
// # Failures
//
// A function that panics stops its own thread: Thread.Err (and Stop)
// return a *PanicError naming the thread and the function; the other
// threads and the host keep running. Bad input (an empty, too long or
// duplicate name, a missing thread or function, a period below the base,
// a bad position) is an error matching rtapi.ErrInvalid; calls in the
// wrong state match rtapi.ErrState; calls after Close match
// rtapi.ErrClosed. A nil Func is a programming error and panics.
//
// ThreadSpec.DeadlinePolicy faults a thread after a run of overruns or
// one wake-up too late (rtapi.DeadlinePolicy): Err returns the
// *rtapi.DeadlineError, which matches rtapi.ErrFaulted.
//
// # Safe states
//
// Thread.AddSafeState (or a .hal file's "safep THREAD PIN VALUE", SafeP)
// registers what brings a thread's outputs to a safe state: drop
// amp-enable, zero the DAC outputs. A thread's safe states run once per
// run, when it ends: on the thread after a function panicked or called
// runtime.Goexit, after its DeadlinePolicy tripped, or when the threads
// are stopped; off the thread, at once, when the rtapi watchdog demotes
// it as runaway. The pins they write stay at the safe values for the
// other threads and for processes reading the data segment.
//
// # Cycle timing and external clocks
//
// A function exported with ExportContext gets a *FuncContext instead of
// the period and the start time: the cycle's release, deadline, lateness
// and missed releases, and the thread's PLL (PLLReference,
// SetPLLCorrection), so that a fieldbus's distributed-clock sync runs as
// a HAL function; rtapi/pll has a PI controller for it
// (ExampleFuncContext_SetPLLCorrection).
//
// # Real-time safety
//
// The per-cycle path (run.go) neither allocates nor locks nor logs.
// Everything else — New, NewThread, Export, AddFunct, RemoveFunct, Start,
// Stop, Close, Stats, OpenMonitor — is set-up code: it may allocate, lock
// and block, and must not be called from a Func.
//
// Names follow LinuxCNC: NewThread is hal_create_thread, Export is
// hal_export_funct, AddFunct is hal_add_funct_to_thread, RemoveFunct is
// hal_del_funct_from_thread, Start and Stop are hal_start_threads and
// hal_stop_threads; FuncContext.PLLReference and SetPLLCorrection are
// rtapi_task_pll_get_reference and rtapi_task_pll_set_correction;
// FunctStats.Time/TMax are a function's .time/.tmax
// and ThreadStats.Time/TMax a thread's; ThreadStats.Beat is the
// thread-beat counter.
//
// Example (example_test.go) runs a base and a servo thread on the sim
// flavor; examples/halhost and examples/halmon, examples/halrun and
// examples/halcmd are complete programs.
package hal
