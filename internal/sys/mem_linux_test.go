package sys_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

// resident counts the pages of b in RAM.
func resident(t *testing.T, b []byte) int {
	t.Helper()
	n, err := sys.ResidentPages(b)
	require.NoError(t, err)
	return n
}

// LockMemory faults in what is mapped when it is called, and locks what
// is mapped later only as it is touched. With plain MCL_FUTURE a new
// mapping was faulted in whole while the process's memory-map lock was
// held: a cgo thread's 8 MB stack (mapped PROT_NONE, then made writable)
// held every other thread's page faults for 10-30 ms.
func TestLockMemoryLocksLaterMappingsAsTheyAreTouched(t *testing.T) {
	rttest.RequireRoot(t, "mlockall of the whole test process")
	rttest.SkipIfEmulated(t, "mincore of a guest mapping")
	const size = 8 << 20
	page := os.Getpagesize()
	mmap := func(prot int) []byte {
		b, err := unix.Mmap(-1, 0, size, prot, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		require.NoError(t, err)
		t.Cleanup(func() { _ = unix.Munmap(b) })
		// Pages, not transparent huge pages: with THP "always", a touch
		// where a 2 MB-aligned stretch fits the mapping (by chance of its
		// address) faults in 512 (the 386 guest counted 167 and 511).
		require.NoError(t, unix.Madvise(b, unix.MADV_NOHUGEPAGE))
		return b
	}
	before := mmap(unix.PROT_READ | unix.PROT_WRITE)
	require.Zero(t, resident(t, before), "a mapping never touched")

	require.NoError(t, sys.LockMemory())
	defer func() { require.NoError(t, sys.UnlockMemory()) }()
	require.Equal(t, size/page, resident(t, before), "what was mapped is faulted in (MCL_CURRENT)")

	later := mmap(unix.PROT_READ | unix.PROT_WRITE)
	require.Zero(t, resident(t, later), "a mapping made after LockMemory was faulted in whole when made")
	stack := mmap(unix.PROT_NONE) // as glibc makes a thread's stack
	require.NoError(t, unix.Mprotect(stack, unix.PROT_READ|unix.PROT_WRITE))
	require.Zero(t, resident(t, stack), "a mapping made writable after LockMemory was faulted in whole")

	later[0], later[size-1], stack[size-1] = 1, 1, 1
	require.Equal(t, 2, resident(t, later), "touched pages")
	require.Equal(t, 1, resident(t, stack), "touched pages")
	st, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	locked, err := sys.ParseVmLck(st)
	require.NoError(t, err)
	require.GreaterOrEqual(t, locked, int64(3*size), "the later mappings are locked (VmLck)")
}
