// Package sys holds gortapi's typed wrappers around the Linux system calls
// the runtime needs (time, sleeps, scheduling, affinity, timers, signal
// masks, memory locking, per-thread usage); nothing else issues them.
//
// Errors are *os.SyscallError, so errors.Is(err, unix.EPERM) works. Calls
// retry on EINTR (Go's preemption sends SIGURG) where the call allows; an
// absolute sleep retries with the same deadline, so a period never shifts.
//
// A function whose doc ends with "RT-safe." may be called from a task body
// (as rtapi defines it); a sleep or wait it names is its only blocking.
package sys
