//go:build linux

package ipc

import (
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
)

// guardedMem returns size bytes (a multiple of 8) of anonymous memory that
// end exactly where a PROT_NONE page begins: any access past the end faults
// at once instead of landing silently in a neighbouring object.
func guardedMem(tb testing.TB, size int) []byte {
	tb.Helper()
	page := os.Getpagesize()
	pages := (size+page-1)/page + 1
	m, err := unix.Mmap(-1, 0, pages*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = unix.Munmap(m) })
	guard := (pages - 1) * page
	require.NoError(tb, unix.Mprotect(m[guard:], unix.PROT_NONE))
	return m[guard-size : guard : guard]
}

// hdrOf returns the shared header of ring memory, for tests that play the
// part of a hostile process.
func hdrOf(mem []byte) *ringHeader { return (*ringHeader)(unsafe.Pointer(&mem[0])) }

// finishes runs f and crashes the test binary, with every goroutine's
// stack, if f has not returned after a generous grace period: it detects a
// hang (an unbounded loop), it does not time anything.
func finishes(t *testing.T, what string, f func()) {
	t.Helper()
	watchdog := time.AfterFunc(time.Minute, func() { panic(what + " did not return: unbounded loop") })
	defer watchdog.Stop()
	f()
}

// A producer whose head another process set to an unaligned index near the
// end must not write its wrap marker past the ring (it used to write up to
// 7 bytes into the next page).
func TestRecordRingProducerIgnoresForeignHead(t *testing.T) {
	t.Parallel()
	mem := guardedMem(t, RingSize(2048))
	q, err := InitRecordRing(mem)
	require.NoError(t, err)
	h := hdrOf(mem)
	atomic.StoreUint64(&h.head, 2047)
	atomic.StoreUint64(&h.tail, 2047)
	for range 4 {
		_ = q.Put(make([]byte, 100)) // data or a typed error, never a stray write
	}
}

// A consumer must not read a record header past the ring whatever tail and
// head say (tail > head, tail unaligned near the end).
func TestRecordRingConsumerIgnoresForeignTail(t *testing.T) {
	t.Parallel()
	mem := guardedMem(t, RingSize(2048))
	q, err := InitRecordRing(mem)
	require.NoError(t, err)
	require.NoError(t, q.Put([]byte("x")))
	h := hdrOf(mem)
	atomic.StoreUint64(&h.tail, 2047)
	atomic.StoreUint64(&h.head, 4096)
	finishes(t, "Peek", func() {
		for range 4 {
			_, _ = q.Peek()
			_ = q.Consume()
		}
	})
}

// A wrap marker at position 0 with a huge head used to make Peek loop
// about 2^56 times.
func TestRecordRingWrapAtZeroIsBounded(t *testing.T) {
	t.Parallel()
	mem := guardedMem(t, RingSize(2048))
	q, err := InitRecordRing(mem)
	require.NoError(t, err)
	require.NoError(t, q.Put([]byte("hello")))
	*(*[2]uint32)(unsafe.Pointer(&mem[RingHeaderSize])) = [2]uint32{0, recordWrap}
	atomic.StoreUint64(&hdrOf(mem).head, 1<<62)
	finishes(t, "Peek", func() {
		_, err = q.Peek()
	})
	require.ErrorIs(t, err, ErrCorrupt)
}

// Another process changing the capacity field while a ring is opened must
// give a ring or a typed error, not "slice bounds out of range".
func TestOpenRecordRingCapacityChanging(t *testing.T) {
	t.Parallel()
	mem := guardedMem(t, RingSize(1024))
	_, err := InitRecordRing(mem)
	require.NoError(t, err)
	h := hdrOf(mem)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			atomic.StoreUint64(&h.capacity, 64)
			atomic.StoreUint64(&h.capacity, 1<<40)
		}
	}()
	defer func() { stop.Store(true); <-done }()
	for range rttest.Rounds(500_000) {
		q, err := OpenRecordRing(mem)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			continue
		}
		require.LessOrEqual(t, q.Capacity(), 1024)
	}
}

// A mutex word naming pid 0 (with or without the waiters bit) has no live
// owner: it used to read as held forever.
func TestMutexOwnerPIDZeroIsDead(t *testing.T) {
	t.Parallel()
	var m Mutex
	m.state = mutexWaiters // pid 0, "someone waits"
	require.ErrorIs(t, m.TryLock(), ErrOwnerDead)
	require.NoError(t, m.Unlock())
	m.state = mutexWaiters
	var err error
	finishes(t, "Lock", func() { err = m.Lock() })
	require.ErrorIs(t, err, ErrOwnerDead)
	require.NoError(t, m.Unlock())
}

// After a hostile tail the producer reports ErrCorrupt (counted) instead of
// overwriting unread records, and recovers once the consumer puts its own
// position back.
func TestRecordRingBadTailIsCorruptThenRecovers(t *testing.T) {
	t.Parallel()
	mem := guardedMem(t, RingSize(256))
	q, err := InitRecordRing(mem)
	require.NoError(t, err)
	rec := make([]byte, 40)
	puts := 0
	for q.Put(rec) == nil { // fill it, so the producer must look at tail
		puts++
	}
	h := hdrOf(mem)
	for _, bad := range []uint64{3, 1 << 40, ^uint64(0) - 100} {
		atomic.StoreUint64(&h.tail, bad)
		before := q.CorruptEvents()
		require.ErrorIs(t, q.Put(rec), ErrCorrupt, "tail %d", bad)
		require.Equal(t, before+1, q.CorruptEvents())
	}
	buf := make([]byte, 64)
	n := 0
	for {
		_, err := q.Get(buf)
		if err == ErrEmpty {
			break
		}
		require.NoError(t, err, "the consumer reads from its own position")
		n++
	}
	require.Equal(t, puts, n)
	require.NoError(t, q.Put(rec), "tail put back by the consumer")
}

// A hostile head: the consumer reports ErrCorrupt, Discard moves on, and
// the producer, finding the consumer somewhere it cannot be, puts its own
// head back for the consumer to find.
func TestRecordRingBadHeadDiscard(t *testing.T) {
	t.Parallel()
	mem := guardedMem(t, RingSize(256))
	q, err := InitRecordRing(mem)
	require.NoError(t, err)
	require.NoError(t, q.Put([]byte("one")))
	h := hdrOf(mem)
	buf := make([]byte, 64)
	for _, bad := range []uint64{7, 1 << 50, ^uint64(0) - 7} {
		atomic.StoreUint64(&h.head, bad)
		_, err := q.Get(buf)
		require.ErrorIs(t, err, ErrCorrupt, "head %d", bad)
	}
	_, err = q.Discard()
	require.NoError(t, err, "an aligned head, however far")
	atomic.StoreUint64(&h.head, 9)
	_, err = q.Discard()
	require.ErrorIs(t, err, ErrCorrupt, "Discard refuses an unaligned head")
	// A plausible head over stale bytes: records read as garbage or corrupt.
	atomic.StoreUint64(&h.head, 128)
	for range 10 {
		if _, err := q.Get(buf); err != nil && err != ErrEmpty {
			require.ErrorIs(t, err, ErrCorrupt)
			_, err = q.Discard()
			require.NoError(t, err)
		}
	}
	// Both sides find each other again within a bounded number of rounds
	// (the stale records read meanwhile are the wrong data a hostile writer
	// can always feed), and then the ring is clean.
	synced := false
	for range 200 {
		_ = q.Put([]byte("two")) // ErrCorrupt while the producer resyncs
		n, err := q.Get(buf)
		if errors.Is(err, ErrCorrupt) {
			_, _ = q.Discard()
			continue
		}
		if err == nil && string(buf[:n]) == "two" {
			synced = true
			break
		}
	}
	require.True(t, synced)
	corrupt := q.CorruptEvents()
	require.NotZero(t, corrupt)
	for i := range 50 {
		require.NoError(t, q.Put([]byte{byte(i)}))
		n, err := q.Get(buf)
		require.NoError(t, err)
		require.Equal(t, []byte{byte(i)}, buf[:n])
	}
	require.Equal(t, corrupt, q.CorruptEvents())
}

// A wrap marker at 0 or one whose skip reaches head is corrupt, and Peek
// steps over at most one marker.
func TestRecordRingBadWrapMarkers(t *testing.T) {
	t.Parallel()
	mem := guardedMem(t, RingSize(256))
	q, err := InitRecordRing(mem)
	require.NoError(t, err)
	for range 2 {
		require.NoError(t, q.Put(make([]byte, 112))) // 120 bytes each
		_, err = q.Get(make([]byte, 256))
		require.NoError(t, err)
	}
	require.NoError(t, q.Put(make([]byte, 16))) // wraps: marker at 240, record at 0
	*(*[2]uint32)(unsafe.Pointer(&mem[RingHeaderSize])) = [2]uint32{0, recordWrap}
	_, err = q.Peek()
	require.ErrorIs(t, err, ErrCorrupt, "a second wrap marker, at 0")
	_, err = q.Discard()
	require.NoError(t, err)
	*(*[2]uint32)(unsafe.Pointer(&mem[RingHeaderSize+q.r.tail&q.r.mask])) = [2]uint32{0, recordWrap}
	atomic.StoreUint64(&hdrOf(mem).head, q.r.tail+8)
	_, err = q.Peek()
	require.ErrorIs(t, err, ErrCorrupt, "a wrap marker whose skip reaches head")
}

// The stream ring checks the other side's index too, with a typed error.
func TestStreamRingBadIndices(t *testing.T) {
	t.Parallel()
	mem := guardedMem(t, RingSize(64))
	s, err := InitStreamRing(mem)
	require.NoError(t, err)
	_, err = s.Write([]byte("abc"))
	require.NoError(t, err)
	h := hdrOf(mem)
	atomic.StoreUint64(&h.head, 1<<40)
	buf := make([]byte, 100)
	_, err = s.Read(buf)
	require.ErrorIs(t, err, ErrCorrupt)
	atomic.StoreUint64(&h.head, 3)
	n, err := s.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "abc", string(buf[:n]))
	atomic.StoreUint64(&h.tail, 1<<40)
	_, err = s.Write(make([]byte, 100))
	require.ErrorIs(t, err, ErrCorrupt)
	require.Equal(t, uint64(2), s.CorruptEvents())
	_, err = s.Read(buf)
	require.ErrorIs(t, err, ErrEmpty, "the consumer puts its tail back")
	_, err = s.Write([]byte("de"))
	require.NoError(t, err)
}

func TestRingAllocsOnCorrupt(t *testing.T) {
	mem := ringMem(256)
	q, _ := InitRecordRing(mem)
	h := hdrOf(mem)
	buf := make([]byte, 64)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		atomic.StoreUint64(&h.head, 3)
		_, _ = q.Get(buf)
		_, _ = q.Discard()
		atomic.StoreUint64(&h.tail, 1<<40)
		_ = q.Put(buf[:8])
	}))
	smem := ringMem(64)
	s, _ := InitStreamRing(smem)
	sh := hdrOf(smem)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		atomic.StoreUint64(&sh.head, 1<<40)
		_, _ = s.Read(buf)
		_, _ = s.Discard()
		atomic.StoreUint64(&sh.tail, 1<<40)
		_, _ = s.Write(buf)
		_, _ = s.Write(buf) // short: ErrFull
	}))
}

// A hostile head written while the ring is full: the producer finds its
// tail good and the ring full, the consumer finds the head bad. The
// producer puts its own head back when it is refused for lack of room, so
// the consumer reads every record again. (It republished only after a bad
// tail, and both sides stayed stuck: ErrFull and ErrCorrupt forever.)
func TestFullRingBadHeadRecovers(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		mem := guardedMem(t, RingSize(256))
		var put func() error
		var get func() error
		if stream {
			s, err := InitStreamRing(mem)
			require.NoError(t, err)
			put = func() error { _, err := s.Write(make([]byte, 40)); return err }
			get = func() error { _, err := s.Read(make([]byte, 40)); return err }
		} else {
			q, err := InitRecordRing(mem)
			require.NoError(t, err)
			put = func() error { return q.Put(make([]byte, 40)) }
			get = func() error {
				_, err := q.Get(make([]byte, 64))
				if errors.Is(err, ErrCorrupt) {
					_, _ = q.Discard()
				}
				return err
			}
		}
		puts := 0
		for put() == nil {
			puts++
		}
		atomic.StoreUint64(&hdrOf(mem).head, 0xb1ab1ab1ab1ab1a5) // unaligned, far ahead
		require.ErrorIs(t, get(), ErrCorrupt, "stream %v", stream)
		require.ErrorIs(t, put(), ErrFull, "stream %v: the ring is still full", stream)
		n := 0
		for get() == nil {
			n++
		}
		require.Positive(t, n, "stream %v: the consumer reads again after the producer's refused put", stream)
		require.NoError(t, put(), "stream %v", stream)
	}
}
