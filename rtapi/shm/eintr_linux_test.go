package shm

import (
	"os"
	"runtime"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
)

// The Go runtime signals its threads (SIGURG, for preemption), and tmpfs
// gives up a fallocate with EINTR when a signal is pending. Before, that
// failed the segment's creation ("fallocate: interrupted system call",
// seen in the 386 guest's Debian 6.1 kernel under load; this one, 6.18,
// does not). allocate now blocks SIGURG while it allocates. Here a
// goroutine signals the allocating thread without pause while it sizes a
// 64 MiB file in /dev/shm twenty times (two under -short): every try
// failed before.
func TestAllocateRetriesAnInterruptedFallocate(t *testing.T) {
	f, err := os.CreateTemp("/dev/shm", "gortapi-eintr-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	fd := int(f.Fd())

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, tid := unix.Getpid(), unix.Gettid()
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			_ = unix.Tgkill(pid, tid, unix.SIGURG) // the runtime ignores a spurious one
		}
	}()
	defer func() { stop.Store(true); <-done }()
	for i := range rttest.Rounds(20) {
		if op, err := allocate(fd, 64<<20); err != nil {
			t.Fatalf("round %d: %s: %v", i, op, err)
		}
		if err := unix.Ftruncate(fd, 0); err != nil {
			t.Fatal(err)
		}
	}
}
