// Package kerneldetect tells what kernel and real-time facilities a Linux
// machine has, and how ready it is to run real-time threads, with the
// evidence for every conclusion.
//
// It is the bottom layer of gortapi: it reads files and knows nothing else.
// Every input comes through an fs.FS laid out like "/" (proc/, sys/, dev/,
// boot/), so a tree captured on another machine (see examples/rtcheck
// -capture) is diagnosed exactly like the live system. [Detect] reads the
// live system through os.DirFS("/"); [DetectFS] reads any tree.
//
// Contract:
//   - Detection never panics and never aborts on bad input. A missing,
//     empty, truncated or garbled file leaves the field it feeds unknown
//     (zero value, or "" for strings) and adds an [Evidence] entry saying
//     what was wrong. DetectFS returns an error only for misuse (a nil
//     fs.FS: [ErrInvalid]).
//   - Pseudo-files are read with a capped reader that ignores st_size, so a
//     file reporting size 0 (procfs) or a huge file cannot mislead it.
//   - Parsing is split from reading: the parse* functions are pure, table
//     tested and fuzzed.
//   - Kind order, highest first: RTAI, Xenomai (Cobalt or EVL), PREEMPT_RT,
//     preempt (full or lazy), vanilla. PREEMPT_RT is recognised from the
//     version string ("PREEMPT_RT" or "PREEMPT RT"), /sys/kernel/realtime
//     or CONFIG_PREEMPT_RT; /sys/kernel/realtime alone is never required
//     (mainline 6.12+ PREEMPT_RT kernels do not have it).
//   - Boot parameters override config defaults as the kernel applies them,
//     and the report says which evidence decided: a PREEMPT_DYNAMIC
//     kernel's mode comes from debugfs (the mode now), else preempt= on
//     the command line, else the config's default ([PreemptInfo].Source);
//     threadirqs needs CONFIG_IRQ_FORCED_THREADING, nohz_full= needs
//     CONFIG_NO_HZ_FULL and implies rcu_nocbs=, isolcpus= isolates from
//     the scheduler only with the domain flag (the default without
//     flags), mitigations= overrides CONFIG_CPU_MITIGATIONS. sysfs, which
//     shows what the kernel applied, wins over the command line.
//   - Checks ([Check]) have stable ids (the Check* constants) and carry the
//     evidence they saw and a concrete remedy.
//   - Detect and DetectFS are safe for concurrent use; a Report is plain
//     data, not safe for concurrent mutation. Detection allocates and reads
//     files: call it at start-up, never from a real-time task body.
//
// Detection reads only files: the live probe that really sets SCHED_FIFO
// belongs to the layers above (flavors.Select makes it when rtapi.Open
// chooses a flavor, and rtapi.RT.Flavor().Why reports it).
//
// ExampleDetectFS (example_test.go) diagnoses a captured tree.
package kerneldetect
