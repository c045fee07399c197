//go:build unix

package sys

import "syscall"

// ProcessAlive reports whether a process with that pid exists: kill(pid, 0)
// does not fail with ESRCH (EPERM means it runs under another user). A pid
// that is not positive names no process; kill(0, 0) would test this
// process's own group and always succeed.
func ProcessAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) != syscall.ESRCH
}
