package rtapi_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// openShm opens a posix RT with an instance of its own and checks at the
// end that the test left nothing in /dev/shm.
func openShm(t *testing.T) *rtapi.RT {
	t.Helper()
	inst := 400000 + os.Getpid()
	t.Cleanup(func() {
		left, _ := filepath.Glob(fmt.Sprintf("/dev/shm/gortapi-%d-*", inst))
		for _, f := range left {
			_ = os.Remove(f)
		}
		assert.Empty(t, left, "segments left in /dev/shm")
	})
	return open(t, rtapi.Options{Flavor: "posix", Instance: inst})
}

func TestShmNewAttach(t *testing.T) {
	rt := openShm(t)
	seg, err := rt.ShmNew(0x1234, 4096)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("/gortapi-%d-00001234", rt.Instance()), seg.Name())
	assert.True(t, seg.Created())
	assert.Equal(t, 4096, seg.Size())
	assert.Equal(t, uint32(0x1234), seg.Key())
	assert.Equal(t, os.Getpid(), seg.CreatorPID())

	again, err := rt.ShmNew(0x1234, 4096)
	require.NoError(t, err)
	assert.False(t, again.Created())
	att, err := rt.ShmAttach(0x1234)
	require.NoError(t, err)
	assert.Equal(t, 3, seg.Attached())
	seg.Bytes()[7] = 7
	assert.Equal(t, byte(7), att.Bytes()[7])

	_, err = rt.ShmNew(0x1234, 8192)
	require.ErrorIs(t, err, shm.ErrSizeMismatch)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	var sm *shm.SizeMismatchError
	require.ErrorAs(t, err, &sm)
	assert.Equal(t, 4096, sm.Existing)
	assert.Equal(t, 8192, sm.Requested)

	ok, err := rt.ShmExists(0x1234)
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, att.Close())
	require.NoError(t, again.Close())
	require.NoError(t, seg.Delete())
	ok, _ = rt.ShmExists(0x1234)
	assert.False(t, ok)
	assert.NoError(t, seg.Close(), "Close after Delete does nothing")
	assert.NoError(t, seg.Delete(), "Delete twice does nothing")
	assert.Nil(t, seg.Bytes())
}

func TestShmMisuse(t *testing.T) {
	rt := openShm(t)
	_, err := rt.ShmAttach(0x99)
	require.ErrorIs(t, err, shm.ErrNotExist)
	require.ErrorIs(t, err, os.ErrNotExist)
	for _, size := range []int{0, -5} {
		_, err = rt.ShmNew(1, size)
		assert.ErrorIs(t, err, rtapi.ErrInvalid)
	}
	assert.ErrorIs(t, rt.ShmRemove(0x99), os.ErrNotExist)

	seg, err := rt.ShmNew(2, 128)
	require.NoError(t, err)
	defer seg.Delete()
	_, err = shm.View[struct{ Name string }](seg, 0)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	var fe *shm.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Name", fe.Field)
	_, err = shm.View[uint64](seg, 3)
	assert.ErrorIs(t, err, rtapi.ErrInvalid)
	_, err = shm.View[[32]uint64](seg, 0)
	assert.ErrorIs(t, err, rtapi.ErrInvalid)
	_, err = ipc.RecordRingAt(seg, 8, 64)
	assert.ErrorIs(t, err, rtapi.ErrInvalid, "misaligned ring")
	_, err = ipc.RecordRingAt(seg, 0, 1<<20)
	assert.ErrorIs(t, err, rtapi.ErrInvalid, "ring larger than the segment")
	_, err = ipc.StreamRingAt(seg, 0, 100)
	assert.ErrorIs(t, err, rtapi.ErrInvalid, "ring too small")
}

func TestShmAfterClose(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix", Instance: 400000 + os.Getpid()})
	require.NoError(t, err)
	require.NoError(t, rt.Close())
	_, err = rt.ShmNew(1, 64)
	assert.ErrorIs(t, err, rtapi.ErrClosed)
	_, err = rt.MsgLogger("x")
	assert.ErrorIs(t, err, rtapi.ErrClosed)
}

type servoShared struct {
	Lock     ipc.Mutex
	Ready    ipc.Semaphore
	Position ipc.Seqlock[[4]float64]
	Cycles   uint64
}

func TestShmPrimitives(t *testing.T) {
	rt := openShm(t)
	size := 1024 + ipc.RingSize(4096)
	seg, err := rt.ShmNew(3, size)
	require.NoError(t, err)
	defer seg.Delete()
	v, err := shm.View[servoShared](seg, 0)
	require.NoError(t, err)

	require.NoError(t, v.Lock.Lock())
	v.Cycles++
	require.NoError(t, v.Lock.Unlock())
	assert.ErrorIs(t, v.Lock.Unlock(), ipc.ErrNotLocked)

	require.NoError(t, v.Ready.Give())
	require.NoError(t, v.Ready.TryTake())
	assert.ErrorIs(t, v.Ready.TryTake(), ipc.ErrBusy)
	assert.ErrorIs(t, v.Ready.TakeDeadline(rt.Now()+int64(time.Millisecond)), ipc.ErrTimeout)

	v.Position.Write(&[4]float64{1, 2, 3, 4})
	var pos [4]float64
	v.Position.Read(&pos)
	assert.Equal(t, [4]float64{1, 2, 3, 4}, pos)

	m, err := ipc.MutexAt(seg, 512)
	require.NoError(t, err)
	require.NoError(t, m.TryLock())
	sem, err := ipc.SemaphoreAt(seg, 520)
	require.NoError(t, err)
	require.NoError(t, sem.Give())
	sl, err := ipc.SeqlockAt[uint64](seg, 576)
	require.NoError(t, err)
	x := uint64(5)
	sl.Write(&x)

	ring, err := ipc.RecordRingAt(seg, 1024, ipc.RingSize(4096))
	require.NoError(t, err)
	require.NoError(t, ring.Put([]byte("hello")))
	other, err := rt.ShmAttach(3)
	require.NoError(t, err)
	defer other.Close()
	reader, err := ipc.RecordRingAt(other, 1024, ipc.RingSize(4096))
	require.NoError(t, err, "a non-creator opens the ring the creator laid out")
	buf := make([]byte, 16)
	n, err := reader.Get(buf)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(buf[:n]))
	_, err = reader.Get(buf)
	assert.ErrorIs(t, err, ipc.ErrEmpty)
	_, err = ipc.StreamRingAt(other, 1024, ipc.RingSize(4096))
	assert.True(t, errors.Is(err, ipc.ErrNotInitialised) || err != nil)
}

// Two tasks of one process hand a token back and forth through two
// Semaphores that are ordinary Go values.
func TestSemaphoreBetweenTasks(t *testing.T) {
	var ping, pong ipc.Semaphore
	rounds := 0
	for range 100 {
		go func() {
			_ = ping.Take()
			_ = pong.Give()
		}()
		require.NoError(t, ping.Give())
		require.NoError(t, pong.Take())
		rounds++
	}
	assert.Equal(t, 100, rounds)
}

// A segment another user planted at the key is refused by ShmNew and
// ShmAttach, naming owner and mode; ShmAllowUIDs lets it in when it is not
// writable by everyone.
func TestShmForeignOwnerRefused(t *testing.T) {
	rttest.RequireRoot(t, "chowns a segment file to another user")
	rt := openShm(t)
	seg, err := rt.ShmNew(0x77, 4096)
	require.NoError(t, err)
	path := "/dev/shm/" + seg.Name()[1:]
	require.NoError(t, seg.Close())
	require.NoError(t, os.Chown(path, 65534, 65534))
	require.NoError(t, os.Chmod(path, 0o666))
	_, err = rt.ShmNew(0x77, 4096)
	require.ErrorIs(t, err, shm.ErrUntrusted)
	require.ErrorIs(t, err, os.ErrPermission)
	var oe *shm.OwnerError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, 65534, oe.UID)
	assert.Contains(t, err.Error(), "mode 0666")
	_, err = rt.ShmAttach(0x77)
	require.ErrorIs(t, err, shm.ErrUntrusted)

	require.NoError(t, os.Chmod(path, 0o600))
	trusting := open(t, rtapi.Options{Flavor: "posix", Instance: rt.Instance(), ShmAllowUIDs: []int{65534}})
	seg, err = trusting.ShmAttach(0x77)
	require.NoError(t, err)
	require.NoError(t, seg.Delete())
}

func TestShmGroupOption(t *testing.T) {
	rttest.RequireRoot(t, "gives a segment to another group")
	inst := 400000 + os.Getpid()
	rt := open(t, rtapi.Options{Flavor: "posix", Instance: inst, ShmGroup: "65534"})
	seg, err := rt.ShmNew(0x78, 64)
	require.NoError(t, err)
	defer seg.Delete()
	fi, err := os.Stat("/dev/shm/" + seg.Name()[1:])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o660), fi.Mode().Perm())
	assert.Equal(t, uint32(65534), fi.Sys().(*syscall.Stat_t).Gid)

	bad := open(t, rtapi.Options{Flavor: "posix", Instance: inst, ShmGroup: "no-such-group-gortapi"})
	_, err = bad.ShmNew(0x79, 64)
	assert.ErrorIs(t, err, rtapi.ErrInvalid)
	bad = open(t, rtapi.Options{Flavor: "posix", Instance: inst, ShmAllowUIDs: []int{-3}})
	_, err = bad.ShmAttach(0x78)
	assert.ErrorIs(t, err, rtapi.ErrInvalid)
}

// Guard turns a fault in a truncated segment into shm.ErrTruncated; Check
// sees the truncation first. (rtapi/shm tests it with a second process.)
func TestShmGuardTruncated(t *testing.T) {
	rt := openShm(t)
	seg, err := rt.ShmNew(0x7a, 2*4096)
	require.NoError(t, err)
	mem := seg.Bytes()
	require.NoError(t, seg.Check())
	require.NoError(t, os.Truncate("/dev/shm/"+seg.Name()[1:], 64))
	require.ErrorIs(t, seg.Check(), shm.ErrTruncated)
	var got byte
	err = seg.Guard(func() { got = mem[len(mem)-1] })
	require.ErrorIs(t, err, shm.ErrTruncated)
	var te *shm.TruncatedError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, int64(64), te.FileSize)
	assert.Zero(t, got)
	require.NoError(t, seg.Delete())
	assert.ErrorIs(t, seg.Guard(func() { t.Fatal("f called after Delete") }), rtapi.ErrClosed)
	assert.ErrorIs(t, seg.Check(), rtapi.ErrClosed)
}

// Errors spell a key as the segment name does, in hex with eight digits:
// 0x00000001, not 1 or 0x000001.
func TestShmErrorsSpellKeysInHex(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	require.NoError(t, rt.Close())
	_, err = rt.ShmNew(1, 64)
	require.ErrorIs(t, err, rtapi.ErrClosed)
	require.Contains(t, err.Error(), "rtapi.ShmNew(0x00000001)")
}
