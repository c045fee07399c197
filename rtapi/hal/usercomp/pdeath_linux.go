package usercomp

import (
	"os/exec"
	"syscall"
)

// dieWithParent has cmd sent SIGTERM when this process ends
// (PR_SET_PDEATHSIG).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
