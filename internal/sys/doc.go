// Package sys holds gortapi's thin, typed wrappers around the Linux system
// calls the runtime needs: monotonic time, absolute sleeps, scheduling
// policy and affinity of one thread, POSIX timers aimed at one thread,
// timerfd, per-thread signal masks, memory locking and per-thread resource
// usage.
//
// There is one wrapper per system call, and this is the only place that
// issues them. Errors are returned as *os.SyscallError so that
// errors.Is(err, unix.EPERM) keeps working. Calls that may be interrupted
// by a signal (Go's asynchronous preemption sends SIGURG) retry on EINTR
// where the call allows it; an absolute sleep retries with the same
// deadline, so an interruption never shifts a period.
//
// A function whose doc ends with "RT-safe." may be called from a real-time
// task body, as package rtapi defines the phrase; a sleep or wait it names
// is the only way it blocks. Everything else belongs in set-up and
// tear-down code.
package sys
