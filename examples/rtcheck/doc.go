// Command rtcheck is what a user runs first on a new machine: it says what
// kind of kernel this is (vanilla, preempt, preempt-rt, xenomai, rtai), the
// evidence for it, every real-time readiness check with its remedy, and
// the next step (table lines "next step").
//
// Usage:
//
//	rtcheck [-json] [-root DIR|FILE.tar.gz] [-capture FILE.tar.gz]
//
//	-json           print the report as JSON (contract below)
//	-root DIR       diagnose a captured tree laid out like / instead of this
//	                machine; a .tar.gz (or .tgz) written by -capture is read
//	                directly. No live probes are run.
//	-capture FILE   also write every file detection read (and only those)
//	                into FILE.tar.gz, for support; diagnose it later with
//	                -root FILE.tar.gz.
//
// Exit status: 0 the machine is RT-capable (real-time kernel, no failed
// check, and the live SCHED_FIFO probe succeeded when it ran), 1 it is
// not, 2 usage error (bad flag, unreadable -root, unwritable -capture).
//
// JSON contract (stable; .ci/realkernel.sh parses it): one object with
//
//	"kind"       "unknown"|"vanilla"|"preempt"|"preempt-rt"|"xenomai"|"rtai"
//	"preempt"    {"model": string, "dynamic": bool, "mode": string}
//	"xenomai"    {"version","core","pipeline",...} or null
//	"rtai"       {"version"} or null
//	"checks"     [{"id","status","evidence","remedy"}], status ok|warn|fail
//	"rt_capable" bool
//	"next_steps" [string], never empty: what to do next, cheapest first
//	             (boot with preempt=full or threadirqs, the distribution's
//	             real-time kernel package, fix the failed checks, measure)
//	"distro"     {"id","arch",...}: os-release, else the kernel version
//	"probes"     {"sched_fifo": {"ok": bool, "detail": string}}, absent
//	             with -root
//
// plus the rest of kerneldetect.Report (uname, cpus, process, evidence).
//
// The SCHED_FIFO probe is live, not read from files: it really sets
// SCHED_FIFO priority 1 on a locked OS thread and restores the previous
// policy (internal/sys.ProbeSchedFIFO).
//
// rtcheck builds with CGO_ENABLED=0 as a static binary, so it can run as
// init inside a minimal initramfs.
package main
