package reexec

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the child when the thread that
// started it exits.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
