//go:build !linux

package spawn

import (
	"os/exec"
	"syscall"
)

func start(cmd *exec.Cmd, _ syscall.Signal) error { return cmd.Start() }
