// Package spawn starts child processes that end with this process.
package spawn

import (
	"os/exec"
	"syscall"
)

// Start starts cmd as cmd.Start does and, on Linux, has the kernel send
// it sig when this process ends (PR_SET_PDEATHSIG), however it ends. It
// sets cmd.SysProcAttr.Pdeathsig.
//
// The kernel sends the signal when the thread that started the child
// ends, and the Go runtime ends any thread a goroutine left locked (a
// real-time task's, when the task ends), so Start starts every child
// from one OS thread it keeps for the life of the process. Elsewhere the
// child outlives a parent that dies.
func Start(cmd *exec.Cmd, sig syscall.Signal) error { return start(cmd, sig) }
