package spawn

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

type request struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	once     sync.Once
	requests chan request
)

func start(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
	once.Do(func() {
		requests = make(chan request)
		go keptThread()
	})
	r := request{cmd, make(chan error, 1)}
	requests <- r
	return <-r.done
}

// keptThread starts the children. Locked and never unlocked, its thread
// ends only with the process.
func keptThread() {
	runtime.LockOSThread()
	for r := range requests {
		r.done <- r.cmd.Start()
	}
}
