//go:build unix

package ipc

import "golang.org/x/sys/unix"

// alive reports whether a process exists (kill(pid, 0): ESRCH means gone;
// EPERM means it exists under another user). A pid that is not positive
// names no process: kill(0, 0) would test this process's own group and
// always succeed, so an owner word another process zeroed would read as
// held forever.
func alive(pid uint32) bool {
	if int32(pid) <= 0 {
		return false
	}
	if pid == selfPID {
		return true
	}
	return unix.Kill(int(pid), 0) != unix.ESRCH
}
