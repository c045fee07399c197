//go:build linux

package shm

import (
	"os"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
)

// truncateChild is the second process of the truncation tests: it opens the
// segment file and shrinks it to SHM_TEST_SIZE bytes, as a misbehaving
// writer would.
func truncateChild() {
	o := devShm()
	key, _ := strconv.ParseUint(os.Getenv("SHM_TEST_KEY"), 10, 32)
	size, _ := strconv.ParseInt(os.Getenv("SHM_TEST_SIZE"), 10, 64)
	if err := os.Truncate(o.Path(uint32(key)), size); err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(2)
	}
	os.Exit(0)
}

func TestTruncateChild(t *testing.T) {
	if rttest.ChildRole() == "truncate" {
		truncateChild()
	}
	t.Skip("helper process for the truncation tests")
}

// Another process truncates the file while this one reads through Guard:
// the reader gets ErrTruncated, the process lives. Without Guard the same
// read ends the process with "fatal error: fault [SIGBUS]".
func TestGuardContainsTruncation(t *testing.T) {
	const key, size = 60, 3 * 4096
	s, err := New(devShm(), key, size)
	require.NoError(t, err)
	defer s.Delete()
	mem := s.Bytes()
	mem[size-1] = 5
	require.NoError(t, s.Check())

	cmd := child(t, "TestTruncateChild", "truncate", "SHM_TEST_KEY=60", "SHM_TEST_SIZE=100")
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	read := func() byte {
		var sum byte
		for i := 0; i < size; i += 512 {
			sum += mem[i]
		}
		return sum + mem[size-1]
	}
	var childDone bool
	for {
		err = s.Guard(func() { sink = read() })
		if err != nil {
			break
		}
		if childDone {
			t.Fatal("a read after the truncation did not fault")
		}
		select {
		case werr := <-done:
			require.NoError(t, werr)
			childDone = true
		default:
		}
	}
	require.ErrorIs(t, err, ErrTruncated)
	var te *TruncatedError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, int64(100), te.FileSize)
	assert.Equal(t, HeaderSize+size, te.Mapped)
	assert.NotZero(t, te.Fault)
	assert.Contains(t, err.Error(), "truncated")
	if !childDone {
		require.NoError(t, <-done)
	}
	assert.ErrorIs(t, s.Check(), ErrTruncated, "Check sees it too")
	// The process goes on: a guarded read keeps failing cleanly, and the
	// first page (still inside the file) stays readable.
	assert.ErrorIs(t, s.Guard(func() { sink = read() }), ErrTruncated)
	assert.NoError(t, s.Guard(func() { sink = mem[0] }))
}

var sink byte

func TestGuardMisuse(t *testing.T) {
	s, err := New(tmpOpts(t), 61, 64)
	require.NoError(t, err)
	assert.PanicsWithValue(t, "f's own", func() { _ = s.Guard(func() { panic("f's own") }) },
		"a panic that is not a fault in the segment passes through")
	// A fault outside the segment is not turned into an error.
	other, err := unix.Mmap(-1, 0, 4096, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON)
	require.NoError(t, err)
	defer unix.Munmap(other)
	assert.Panics(t, func() { _ = s.Guard(func() { sink = other[0] }) })
	ran := false
	require.NoError(t, s.Guard(func() { ran = true }))
	assert.True(t, ran)
	require.NoError(t, s.Delete())
	assert.ErrorIs(t, s.Guard(func() { t.Fatal("f called after Close") }), ErrClosed)
	assert.ErrorIs(t, s.Check(), ErrClosed)
}

// After another process truncates the file to nothing, every attachment
// still closes, deletes and counts without a fault: the header updates of
// detach and Attached are guarded. Before, each died of SIGBUS.
func TestCloseAfterTruncation(t *testing.T) {
	rttest.RequireSelfExec(t) // before the segment exists: a skip leaves nothing behind
	for _, del := range []bool{false, true} {
		const key = 62
		creator, err := New(devShm(), key, 3*4096)
		require.NoError(t, err)
		other, err := Attach(devShm(), key)
		require.NoError(t, err)
		runChild(t, child(t, "TestTruncateChild", "truncate", "SHM_TEST_KEY=62", "SHM_TEST_SIZE=0"))
		assert.Equal(t, -1, creator.Attached(), "the header is gone")
		assert.ErrorIs(t, other.Check(), ErrTruncated)
		require.NoError(t, other.Close())
		if del {
			require.NoError(t, creator.Delete())
		} else {
			require.NoError(t, creator.Close())
			require.NoError(t, Remove(devShm(), key))
		}
		ok, err := Exists(devShm(), key)
		require.NoError(t, err)
		assert.False(t, ok)
	}
}

// A writer that cannot guard each store recovers a fault once: Fault
// names it as this segment's, Orphan makes the same memory private, and
// the same pointers then read what the file still held and take stores
// without faulting. Nothing after reaches the file.
func TestOrphanAfterTruncation(t *testing.T) {
	rttest.SkipIfEmulated(t, "qemu-user reports a SIGBUS past a file's end at address 0, which Go takes for a nil dereference: truncation faults are checked natively")
	const key, size = 63, 3 * 4096
	s, err := New(tmpOpts(t), key, size)
	require.NoError(t, err)
	defer s.Delete()
	mem := s.Bytes()
	mem[0], mem[size-1] = 7, 5
	require.NoError(t, os.Truncate(s.Path(), 4096)) // the header and mem[0] survive

	fault := func() (v any) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { v = recover() }()
		mem[size-1] = 6
		return nil
	}()
	require.NotNil(t, fault, "the store past the file's end faulted")
	te := s.Fault(fault)
	require.NotNil(t, te, "%v", fault)
	assert.ErrorIs(t, te, ErrTruncated)
	assert.Equal(t, int64(4096), te.FileSize)
	assert.Nil(t, s.Fault("not a fault"))
	assert.Nil(t, s.Fault(nil))

	require.NoError(t, s.Orphan())
	require.NoError(t, s.Orphan(), "again: nothing to do")
	mem[size-1] = 6 // no fault any more
	assert.Equal(t, byte(6), mem[size-1])
	assert.Equal(t, byte(7), mem[0], "what the file held is kept")
	mem[0] = 9
	file, err := os.ReadFile(s.Path())
	require.NoError(t, err)
	assert.Equal(t, byte(7), file[HeaderSize], "stores reach the file no more")
	require.NoError(t, s.Delete())
	assert.ErrorIs(t, s.Orphan(), ErrClosed)
	assert.Nil(t, s.Fault(fault), "a closed attachment owns no fault")
}
