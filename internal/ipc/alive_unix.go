//go:build unix

package ipc

import "golang.org/x/sys/unix"

// alive reports whether a process exists (kill(pid, 0): ESRCH means gone;
// EPERM means it exists under another user).
func alive(pid uint32) bool {
	if pid == selfPID {
		return true
	}
	return unix.Kill(int(pid), 0) != unix.ESRCH
}
