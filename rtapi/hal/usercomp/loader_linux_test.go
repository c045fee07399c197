package usercomp

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// A program loadusr started lives until the host process ends, not until
// the OS thread that happened to start it ends: PR_SET_PDEATHSIG fires
// when the starting thread exits, and a HAL task's thread exits when the
// HAL thread stops, after the runtime may have run a loadusr on it.
func TestLoadusrOutlivesItsStartingThread(t *testing.T) {
	l := &Loader{DieWithParent: true, Comps: func() ([]hal.CompInfo, error) { return nil, nil }}
	t.Cleanup(func() { _ = l.Close(time.Second) })
	cmd, _, err := halfile.ParseLine("loadusr sleep 60")
	require.NoError(t, err)
	var execErr error
	tid := onEndingThread(func() { _, execErr = l.Exec(context.Background(), cmd) })
	require.NoError(t, execErr)
	// The thread is gone once its /proc entry is: the kernel has then
	// sent any parent-death signal.
	for {
		if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid)); os.IsNotExist(err) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	l.mu.Lock()
	k := l.kids[0]
	l.mu.Unlock()
	select {
	case <-k.done:
		t.Fatalf("the program ended with the thread that started it: %v", k.err)
	case <-time.After(500 * time.Millisecond):
	}
}

// onEndingThread runs f on an OS thread that ends when f returns (not
// the main thread, which the runtime keeps), and returns its id.
func onEndingThread(f func()) int {
	for {
		tids := make(chan int)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			tid := unix.Gettid()
			if tid == unix.Getpid() {
				runtime.UnlockOSThread()
				tids <- 0
				return
			}
			f()
			tids <- tid
		}()
		if tid := <-tids; tid != 0 {
			return tid
		}
	}
}
