// Command latency-test measures how well this machine, and gortapi on it,
// keeps real-time periodic tasks on time. It is the first thing to run:
//
//	go run ./examples/latency-test
//
// runs one 1 ms "servo" task at the highest priority for 10 s on the
// automatically chosen flavor, shows each task's figures once a second
// (redrawn in place on a terminal, one plain line a second when piped), and
// ends with a summary: the flavor and why it was chosen, percentiles of the
// wake-up latency (p50 p90 p99 p99.9 max), execution time, overruns,
// context switches and a histogram. Ctrl-C ends the run early and still
// prints the summary of what was measured.
//
// Usage:
//
//	latency-test [flags]
//	latency-test [flags] [-s] [base-period [servo-period]]   (LinuxCNC's form)
//
// LinuxCNC's form runs LinuxCNC latency-test's threads: base (default
// 25 µs) and servo (default 1 ms), periods with a suffix (25us, 1ms,
// 25000ns) or without one (below 1000: µs, else ns); base "-", or -s,
// runs the servo thread only. The summary then ends with LinuxCNC's
// table: each thread's Max Interval, Max Jitter (the largest |interval −
// period|) and Last interval, in ns.
//
// Flags that mean what they mean for cyclictest, in its spellings too
// (--priority=80, --histogram=400, --histfile=F, --duration=1m, --json=F,
// --mlockall, --quiet, --interval, --affinity):
//
//	-p PRIO       priority of the fastest task (0: the flavor's highest).
//	              An explicit -p means real-time, as for cyclictest: SCHED_FIFO
//	              on any kernel (-vanilla-fifo on a non-RT one); when SCHED_FIFO
//	              cannot be had, stderr says so in every format, and
//	              -rtapi.strict refuses to run
//	-i INTERVAL   period: microseconds (1000) or a duration (250us)
//	-t N          N tasks; task i has interval I + i×500 µs
//	-a CPUS       pin tasks round robin to these CPUs (1, 0,2, 2-3)
//	-D DURATION   run time: seconds (10), 30s, 5m, 1h; 0 runs until Ctrl-C
//	-h US         histogram: print it at the end up to US µs (1 µs buckets);
//	              without -h the histograms are bounded at 10000 µs and, in
//	              -format cyclictest, not printed
//	-m            lock memory (mlockall)
//	-q            no live display, only the summary; with -format cyclictest
//	              what cyclictest -q prints: the thread lines, or with -h the
//	              histogram alone
//	-help         this help (exit status 0)
//
// cyclictest's command line: every option of cyclictest 2.40 that has a
// meaning here is read in every spelling its getopt_long accepts: short
// options combined (-Sp90, -mq), values attached (-i200, -t2, -a1) or
// following, optional values left out (-t: one thread per CPU; -a: pin
// thread i to the i-th CPU), --name=value, --name value and unique
// prefixes (--prior=80). They mix with latency-test's own flags.
//
//	-x, --posix_timers  -wake posix-timer
//	-l, --loops N       end the run when the first task ran N cycles
//	-d, --distance US   interval step between -t tasks (default 500)
//	-S, --smp           one task per available CPU, pinned, one priority
//	--priospread        priorities p, p-1, ... (default: all at -p)
//	--policy fifo|other SCHED_FIFO (priority threads+1 without -p) or SCHED_OTHER
//	-N, --nsecs         thread lines in ns
//	-M, --refresh_on_max  redraw the live lines only when a maximum grew
//	-u, --unbuffered    accepted: latency-test never buffers its output
//	-v, --verbose       every wake-up latency as thread:cycle:value, read every 10 ms
//	-H, --histofall US  -h with cyclictest's summary column over all threads
//	-b, --breaktrace US when a wake-up is later than US µs: write a marker to the
//	                    kernel's trace (tracefs trace_marker), stop tracing
//	                    (tracing_on 0), end the run, and print "# Break thread:"
//	                    and "# Break value:" last; needs tracefs mounted and writable
//	--tracemark         accepted with -b, which always writes the marker
//	-trace-dir DIR      (latency-test's) the tracefs directory -b writes in, such
//	                    as a trace instance; default: the mounted tracefs. DIR
//	                    must be on a tracefs (statfs) and its files are not
//	                    followed if symlinks; anything else ends the run at start
//
// The command line is cyclictest's when the program is invoked as
// cyclictest (a link or copy named so) or an option or spelling above
// that only cyclictest has is given. Then, as with -format cyclictest,
// the output is cyclictest's, every -t thread runs at -p unless
// --priospread, with -h every thread runs at -i, the overrun policy is
// skip (one wake-up measured per cycle), and the exit status is 1 when
// SCHED_FIFO was asked for and refused. The options cyclictest has and
// latency-test not (-A, -c, -F, -o, -r, -R, -s,
// --spike, --smi, --laptop, --latency, --default-system, --mainaffinity,
// --secaligned, --policy rr|batch|idle) are refused with a line naming
// what latency-test offers instead.
//
// gortapi's own:
//
//	-threads servo=1ms,base=25us   LinuxCNC-style named tasks (rate-monotonic priorities)
//	-flavor auto|posix|rt-preempt|sim
//	-vanilla-fifo                 SCHED_FIFO + POSIX timers on a non-RT kernel
//	-wake nanosleep|timerfd|posix-timer
//	-overrun catchup|skip
//	-load alloc=200MB/s           allocating goroutines in this process (repeatable;
//	-load hrtimers=100              100 threads sleeping 4 ms (hrtimer storm);
//	-load cpu=N                     N spinning goroutines)
//	-body busy=50us               each cycle busy-waits this long (execution-time jitter)
//	-sim-replay FILE              with -flavor sim: replay a recorded latency histogram
//	                              (a -json file, or a cyclictest histogram) as every
//	                              task's wake-up jitter, deterministically, on virtual time
//	-watchdog off|auto|DURATION   rtapi's runaway-task watchdog (default off: a
//	                              latency test reports stalls rather than faulting on them)
//	-interference auto|on|off     rtapi's per-cycle interference counters, shown
//	                              in the summary (preemptions, Go scheduler parks,
//	                              GC, faults, and the causes of late wake-ups)
//
// Output:
//
//	-format text|cyclictest  cyclictest prints what cyclictest prints: the
//	                         "# /dev/cpu_dma_latency set to 0us" header when held,
//	                         the policy/loadavg status block and thread lines, and
//	                         with -h its histogram layout with the overflow cycles
//	                         (stdout or -histfile)
//	-histfile FILE           write the cyclictest-layout histogram to FILE
//	-json FILE               every figure machine-readably: kernel report, flavor
//	                         and why, each task's statistics, summaries and
//	                         histograms; with -format cyclictest, cyclictest
//	                         --json's own layout (file_version, sysinfo, thread)
//	-svg FILE                histogram plot (log-scale latency and counts,
//	                         percentile markers, overflow shown)
//
// -histfile, -json and -svg are created before the run: a path that cannot
// be written is a usage error at once.
//
// The -rtapi.* flags of package rtapi (-rtapi.lock-memory, -rtapi.strict,
// -rtapi.cpu, ...) are accepted too; -flavor, -vanilla-fifo and -m, when
// given, win over their -rtapi.* twins whatever their value
// (-vanilla-fifo=false -rtapi.vanilla-fifo runs SCHED_OTHER), -a places
// tasks before -rtapi.cpu does, and -rtapi.histogram-bound is refused:
// -h bounds the histograms.
//
// With -flavor sim the run takes virtual time (-D is required and passes
// as fast as the bodies run): latencies are those injected, none by
// default, a recorded machine's with -sim-replay.
//
// Unprivileged, the posix flavor runs the tasks SCHED_OTHER and the summary
// says so and how to do better; as root on a PREEMPT_RT kernel the
// rt-preempt flavor runs them SCHED_FIFO. On a vanilla or PREEMPT kernel as
// root, -vanilla-fifo or -flavor rt-preempt give SCHED_FIFO.
//
// Exit status: 0 after a run (also one ended by Ctrl-C), 1 when the
// runtime failed (a flavor asked for that cannot run here, a task that
// failed, SCHED_FIFO refused with cyclictest's command line or output), 2 for bad input (an unwritable output file, an interval of 0 or below 10 µs, a histogram
// bound of 0, an unknown flavor or wake mode, a priority out of range, a
// -threads list that does not parse), with one line saying what was wrong.
package main
