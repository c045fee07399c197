//go:build realkernel

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRealKernel runs the real-kernel lane, .ci/realkernel.sh: it boots
// Debian's PREEMPT_RT and standard kernels under qemu with a static rtcheck as
// init and checks that rtcheck reports preempt-rt (resp. not) and can set
// SCHED_FIFO inside, and that rtapi's TestRTPrioLimit, run there by init as
// root (who may raise RLIMIT_RTPRIO), passes rather than skips. The script
// fetches what it needs (apt, kernel packages) into a cache outside the
// repository, so the first run needs root and Debian's mirrors; see the
// script's header for its environment knobs.
//
//	go test -tags realkernel -run TestRealKernel -v ./examples/rtcheck/
func TestRealKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("the real-kernel lane boots two kernels under qemu; skipped in -short mode")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, ".ci", "realkernel.sh")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("real-kernel lane script: %v", err)
	}

	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		// Leave time to report what the script printed before go test's own timeout fires.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-15*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = root
	cmd.Stdout = t.Output()
	cmd.Stderr = cmd.Stdout
	// The script starts qemu in the background: on timeout, stop the whole
	// process group, not just bash, so that no guest outlives the test.
	// SIGTERM lets the script print where its scratch dir is; WaitDelay
	// kills it if it does not go.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			t.Fatalf("%s did not finish before the test deadline: %v", script, err)
		}
		t.Fatalf("%s: %v (its output above says which kernel failed and why)", script, err)
	}
}
