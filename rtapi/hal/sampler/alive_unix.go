//go:build unix

package sampler

import (
	"errors"
	"syscall"
)

// hostAlive reports whether a process with that pid exists (signal 0).
func hostAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
