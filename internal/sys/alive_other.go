//go:build !unix

package sys

// ProcessAlive reports every positive pid alive: it cannot ask the system.
func ProcessAlive(pid int) bool { return pid > 0 }
