//go:build linux

package backend

import (
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
)

// Memory locks are the process's, so each case runs in a child of its own:
// this test binary, re-run for one case with GORTAPI_HARDEN_CHILD set.
func TestLockMemoryAcrossInstances(t *testing.T) {
	cases := map[string]func(t *testing.T){
		// Every instance's setting counts, not only the first one's: a
		// second instance asking for the lock gets it while a first one
		// that did not ask is open, and it is undone when the last
		// instance that asked closes.
		"second-asks": func(t *testing.T) {
			requireUnlocked(t)
			off := openFIFO(t, LockNever)
			requireUnlocked(t)
			on := openFIFO(t, LockAlways)
			require.Positive(t, lockedMemory(t), "the second instance asked for locked memory")
			require.NoError(t, on.Close())
			requireUnlocked(t)
			require.NoError(t, off.Close())
			requireUnlocked(t)
		},
		// Two instances that ask: the lock stays until the second closes.
		"both-ask": func(t *testing.T) {
			a, b := openFIFO(t, LockAlways), openFIFO(t, LockAlways)
			require.NoError(t, a.Close())
			require.Positive(t, lockedMemory(t))
			require.NoError(t, b.Close())
			requireUnlocked(t)
		},
		// A lock the program took itself is not ours to undo: Close
		// leaves it, for mlockall and for a single locked buffer alike.
		"program-mlockall": func(t *testing.T) {
			require.NoError(t, unix.Mlockall(unix.MCL_CURRENT|unix.MCL_FUTURE))
			before := lockedMemory(t)
			f := openFIFO(t, LockAlways)
			require.NoError(t, f.Close())
			require.GreaterOrEqual(t, lockedMemory(t), before, "the program's own mlockall survives Close")
		},
		"program-mlock": func(t *testing.T) {
			buf := make([]byte, 1<<20)
			require.NoError(t, unix.Mlock(buf))
			f := openFIFO(t, LockAlways)
			require.NoError(t, f.Close())
			require.GreaterOrEqual(t, lockedMemory(t), int64(len(buf)), "the program's locked buffer survives Close")
		},
	}
	if name := rttest.ChildRole(); name != "" {
		cases[name](t)
		return
	}
	rttest.RequireRT(t)
	rttest.RequireRoot(t, "locks memory without limit (CAP_IPC_LOCK)")
	for name := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := rttest.Child(name, "-test.run=^TestLockMemoryAcrossInstances$", "-test.v")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "child %s:\n%s", name, out)
			require.True(t, strings.Contains(string(out), "--- PASS: TestLockMemoryAcrossInstances"), "child:\n%s", out)
		})
	}
}

// openFIFO opens a real-time flavor (VanillaFIFO) with the given
// LockMemory setting.
func openFIFO(t *testing.T, lock LockMode) Flavor {
	t.Helper()
	c, err := Select(PosixName, Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: &kerneldetect.Report{Kind: kerneldetect.Vanilla}, VanillaFIFO: true,
		Strict: true, LockMemory: lock})
	require.NoError(t, err)
	require.True(t, c.Flavor.RealTime())
	return c.Flavor
}

func lockedMemory(t *testing.T) int64 {
	t.Helper()
	n, err := sys.LockedMemory()
	require.NoError(t, err)
	return n
}

func requireUnlocked(t *testing.T) {
	t.Helper()
	require.Zero(t, lockedMemory(t), "VmLck")
}

// A /dev/cpu_dma_latency this user may not open is reported with the
// remedy rtcheck gives: a udev rule for the realtime group.
func TestDMANoteNamesUdevRule(t *testing.T) {
	t.Parallel()
	note := dmaNote(&fs.PathError{Op: "open", Path: "/dev/cpu_dma_latency", Err: syscall.EACCES})
	assert.Contains(t, note, "cpu_dma_latency not held: open /dev/cpu_dma_latency: permission denied")
	assert.Contains(t, note, `KERNEL=="cpu_dma_latency", GROUP="realtime", MODE="0660"`)

	note = dmaNote(&fs.PathError{Op: "open", Path: "/dev/cpu_dma_latency", Err: syscall.ENOENT})
	assert.NotContains(t, note, "udev", "no udev rule for a missing device")
}
