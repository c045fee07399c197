// Package reexec runs this program again as a child process in a role:
// a test re-runs its own binary to play a second process
// (internal/rttest), a benchmark runs each measurement in a fresh process
// (examples/latency-bench). The role travels in the environment (Env),
// so the child's arguments are the caller's own; on Linux the child ends
// itself when the process that started it ends, however it ends, so a
// parent that dies leaves no orphan behind.
package reexec

import (
	"context"
	"os"
	"os/exec"
)

// Env carries the role to the child.
const Env = "GORTAPI_CHILD"

// Role returns the role this process was started in by Command, or ""
// for a process nobody started as a child.
func Role() string { return os.Getenv(Env) }

// Command returns an unstarted command running this program's executable
// again as role, with args and this environment plus Env=role.
func Command(role string, args ...string) *exec.Cmd {
	return setup(exec.Command(self(), args...), role)
}

// CommandContext is Command, killed when ctx is done (exec.CommandContext).
func CommandContext(ctx context.Context, role string, args ...string) *exec.Cmd {
	return setup(exec.CommandContext(ctx, self(), args...), role)
}

func setup(cmd *exec.Cmd, role string) *exec.Cmd {
	cmd.Env = append(os.Environ(), Env+"="+role)
	dieWithParent(cmd)
	return cmd
}

// self is the running executable: os.Executable, or os.Args[0] where the
// system cannot tell.
func self() string {
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return os.Args[0]
}
