//go:build unix

package sys

import "syscall"

// ProcessAlive reports whether a process with that pid exists (kill(pid, 0)
// is not ESRCH; EPERM means another user's). A pid <= 0 is never alive.
func ProcessAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) != syscall.ESRCH
}
