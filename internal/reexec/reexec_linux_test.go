package reexec

import (
	"context"
	"syscall"
	"testing"
)

// The child dies with its parent: the kernel sends it SIGKILL.
func TestCommandDiesWithParent(t *testing.T) {
	c := Command("x")
	if c.SysProcAttr == nil || c.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Fatalf("SysProcAttr %+v: no Pdeathsig", c.SysProcAttr)
	}
	c = CommandContext(context.Background(), "x")
	if c.SysProcAttr == nil || c.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Fatalf("CommandContext: SysProcAttr %+v: no Pdeathsig", c.SysProcAttr)
	}
}
