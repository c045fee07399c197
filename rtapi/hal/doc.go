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
// The first thread fixes the base period; later periods are rounded to
// the nearest whole multiple of it (Thread.Requested keeps what was
// asked), and a shorter one is refused. Priorities are rate-monotonic
// (RateMonotonic) unless a ThreadSpec gives one. Start and Stop act on all
// threads together. Each thread is an rtapi task, so it runs on every
// flavor; on sim deterministically, in virtual time.
//
// # Functions
//
// A function is a Func exported under a unique name and added to one
// thread at a Position (First, Last or At(i)); each cycle a thread calls
// its chain in order. Functions may be added and removed while the
// threads run: a change takes effect at the next cycle boundary, and
// RemoveFunct returns only once no thread can call the removed function.
//
// # Timing
//
// Per function the HAL keeps the last and the worst call time (LinuxCNC's
// .time and .tmax), calls and overruns; per thread the chain's time and
// worst, overruns and the thread-beat. A call overruns when it ends after
// the next release was due and either began before it or alone lasted
// longer than the period, so the count names the function that made the
// thread late. Thread.Stats and HAL.Stats read them from any goroutine:
// a thread's as of its last cycle, a function's as its thread last
// published them (Funct.Stats). On the sim flavor the chain takes no virtual
// time: function and chain times read 0, and injected overruns show in
// Thread.Task().Stats().
//
// As in LinuxCNC, the times are also in the HAL, for getp, show and
// halcmd: each function's NAME.time (s32 OUT pin, ns), NAME.tmax (s32 RW
// parameter; setp NAME.tmax 0 resets it) and NAME.tmax-increased (bit
// RO parameter: the last call raised .tmax), each thread's NAME.time,
// NAME.tmax and NAME.threadbeat, under the pseudo component "__NAME".
//
// With Options.StatsKey set, the counters live in a shared-memory segment
// ("/gortapi-<instance>-<key>") that another process watches without
// taking a lock the real-time side could wait on (OpenView,
// examples/halmon). Every Options.PublishEvery each thread publishes its
// functions' counters there, and its record through a seqlock
// (HACKING.md, "The HAL's segments").
//
// # Components, pins, parameters and signals
//
// A Component (NewComponent, LinuxCNC's hal_init) makes pins of type bit,
// float, s32, u32, s64 or u64 and direction In, Out or IO, and parameters
// RO or RW, then calls Ready. Each returns a handle (Bit, Float, S32, ...)
// whose Get and Set a function calls every cycle: 64-bit loads and
// stores that are atomic, also on 32-bit systems. On amd64 (without
// -race) Set is a plain store, as LinuxCNC's hal_set_* are, ordered after
// the thread's earlier stores but not before its later loads; elsewhere,
// and under the race detector, a sequentially consistent atomic store.
// The zero handle is not usable, nor is any handle after HAL.Close.
//
// Net links pins to a signal (at most one Out writer, and not beside IO
// pins; a type mismatch or a second writer is an error naming both pins);
// Unlink, SetP, GetP, SetS and GetS are halcmd's unlinkp, setp, getp,
// sets and gets. An unlinked In pin reads its own value, which SetP sets.
// A change of links made while threads run takes effect between cycles,
// for all its pins at once, and returns once every running thread has
// left the cycle it was in (HACKING.md, "The HAL's link gate").
//
// The values live in a data segment (Options.DataKey) that another
// process reads through OpenView (examples/halmon); changes go to the
// host's command socket (package halctl, examples/halcmd), which runs
// them with Exec. The host reads back only values from the segment, so a
// hostile writer can only produce wrong values. If a writer truncates it, the host makes it private
// memory and goes on; HAL.DataErr and Close report shm.ErrTruncated.
// Pin handles used from other goroutines of the host are not guarded: a
// fault there kills the process (docs/SECURITY.md, "Truncation").
//
// Components are compiled in: Register names a Factory, LoadRT ("loadrt
// pid count=2") runs it; rtapi/hal/comps registers the standard ones.
// Exec and Load run commands parsed by rtapi/hal/halfile (a .hal file);
// Show and Save print what halcmd's show and save print. Package
// rtapi/hal/halctl serves those commands to examples/halcmd; package
// rtapi/hal/sampler is the sampler component (Component.NewSegment).
//
// # Failures
//
// A function that panics stops its own thread: Thread.Err (and Stop)
// return a *PanicError naming the thread and the function; the other
// threads keep running. A thread whose ThreadSpec.DeadlinePolicy trips
// ends with an *rtapi.DeadlineError (rtapi.ErrFaulted). Bad input matches
// rtapi.ErrInvalid, calls in the wrong state rtapi.ErrState, calls after
// Close rtapi.ErrClosed. A nil Func panics.
//
// # Safe states
//
// Thread.AddSafeState (SafeP, a .hal file's "safep THREAD PIN VALUE")
// registers what brings a thread's outputs to a safe state: drop
// amp-enable, zero the DAC outputs. They run when the thread ends (a
// panic, runtime.Goexit, its DeadlinePolicy, Stop), or at once when the
// rtapi watchdog demotes it as runaway or Stop gives up on a stuck
// function, and again when that function returns. They are the last word:
// once a thread faults, none of its functions is called again, and the
// safe states are its last writes to their pins (docs/SAFETY.md).
//
// # Cycle timing and external clocks
//
// A function exported with ExportContext gets a *FuncContext: the cycle's
// release, deadline, lateness and missed releases, and the thread's PLL
// (PLLReference, SetPLLCorrection), so a fieldbus's distributed-clock
// sync runs as a HAL function; rtapi/pll has a PI controller for it.
//
// # Real-time safety
//
// The per-cycle path neither allocates nor locks nor logs. Everything
// else (New, NewThread, Export, AddFunct, RemoveFunct, Start, Stop,
// Close, Stats, OpenView, ...) is set-up code: it may allocate, lock
// and block, and must not be called from a Func.
//
// Names follow LinuxCNC: NewThread is hal_create_thread, Export is
// hal_export_funct, AddFunct is hal_add_funct_to_thread (halcmd addf),
// RemoveFunct is hal_del_funct_from_thread (delf), Start and Stop are
// hal_start_threads and hal_stop_threads; NewComponent is hal_init, Ready
// hal_ready, Component.Float and FloatParam hal_pin_float_new and
// hal_param_float_new (likewise for each type), Link and Unlink hal_link
// and hal_unlink; FuncContext.PLLReference and SetPLLCorrection are
// rtapi_task_pll_get_reference and rtapi_task_pll_set_correction;
// FunctStats.Time/TMax are a function's .time/.tmax and
// ThreadStats.Time/TMax a thread's; ThreadStats.Beat is the thread-beat.
//
// Example runs a base and a servo thread on the sim flavor;
// examples/halhost, halmon, halrun and halcmd are complete programs.
package hal
