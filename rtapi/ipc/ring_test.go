//go:build linux

package ipc

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// ringMem returns 8-byte aligned heap memory for an in-process ring.
func ringMem(capacity int) []byte {
	words := make([]uint64, RingSize(capacity)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
}

func TestRingSize(t *testing.T) {
	t.Parallel()
	assert.Equal(t, RingHeaderSize+64, RingSize(0))
	assert.Equal(t, RingHeaderSize+1024, RingSize(1000))
	assert.Equal(t, RingHeaderSize+1024, RingSize(1024))
}

func TestRingMisuse(t *testing.T) {
	t.Parallel()
	_, err := InitRecordRing(make([]byte, 100))
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = InitStreamRing(nil)
	assert.ErrorIs(t, err, ErrInvalid)
	mem := ringMem(128)
	_, err = InitRecordRing(mem[1:])
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "aligned")

	_, err = OpenRecordRing(mem)
	assert.ErrorIs(t, err, ErrNotInitialised)
	copy(mem, "garbage!")
	_, err = OpenRecordRing(mem)
	assert.ErrorIs(t, err, ErrCorrupt)

	_, err = InitStreamRing(mem)
	require.NoError(t, err)
	_, err = OpenRecordRing(mem)
	assert.ErrorIs(t, err, ErrWrongMode)
	assert.Contains(t, err.Error(), "stream")

	q, err := InitRecordRing(mem)
	require.NoError(t, err)
	h := (*ringHeader)(unsafe.Pointer(&mem[0]))
	h.capacity = 100
	_, err = OpenRecordRing(mem)
	assert.ErrorIs(t, err, ErrCorrupt)
	h.capacity = 1 << 20
	_, err = OpenRecordRing(mem)
	assert.ErrorIs(t, err, ErrCorrupt)
	h.capacity = 128
	h.head = 1000
	_, err = OpenRecordRing(mem)
	assert.ErrorIs(t, err, ErrCorrupt)
	h.head = 0

	assert.ErrorIs(t, q.Commit(), ErrInvalid, "commit without reserve")
	assert.ErrorIs(t, q.Consume(), ErrEmpty, "consume without peek")
	_, err = q.Reserve(-1)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorIs(t, q.Put(make([]byte, q.MaxRecord()+1)), ErrInvalid)
	require.NoError(t, q.Put(make([]byte, q.MaxRecord())))
}

func TestRecordRingOrderAndWrap(t *testing.T) {
	t.Parallel()
	q, err := InitRecordRing(ringMem(256))
	require.NoError(t, err)
	assert.Equal(t, 256, q.Capacity())
	buf := make([]byte, 256)
	_, err = q.Get(buf)
	assert.ErrorIs(t, err, ErrEmpty)
	// Many rounds of mixed sizes force wrap markers at every offset.
	next := 0
	for round := range 500 {
		sizes := []int{round % 7, 13, 0, 40, round % 50}
		for i, n := range sizes {
			rec := make([]byte, n)
			for j := range rec {
				rec[j] = byte(next + i + j)
			}
			require.NoError(t, q.Put(rec), "round %d", round)
		}
		for i, n := range sizes {
			got, err := q.Get(buf)
			require.NoError(t, err)
			require.Equal(t, n, got)
			for j := range got {
				require.Equal(t, byte(next+i+j), buf[j])
			}
		}
		next++
	}
	assert.Zero(t, q.Used())
	assert.Zero(t, q.Dropped())
}

func TestRecordRingFull(t *testing.T) {
	t.Parallel()
	q, err := InitRecordRing(ringMem(64))
	require.NoError(t, err)
	rec := make([]byte, 8) // 16 bytes with header: 4 fit
	for range 4 {
		require.NoError(t, q.Put(rec))
	}
	assert.ErrorIs(t, q.Put(rec), ErrFull)
	assert.ErrorIs(t, q.Put(rec), ErrFull)
	assert.Equal(t, uint64(2), q.Dropped())
	_, err = q.Get(make([]byte, 8))
	require.NoError(t, err)
	require.NoError(t, q.Put(rec), "room again after a read")
}

func TestRecordRingPeekReserveShort(t *testing.T) {
	t.Parallel()
	q, err := InitRecordRing(ringMem(256))
	require.NoError(t, err)
	b, err := q.Reserve(5)
	require.NoError(t, err)
	copy(b, "hello")
	_, err = q.Peek()
	assert.ErrorIs(t, err, ErrEmpty, "not visible before Commit")
	require.NoError(t, q.Commit())
	p, err := q.Peek()
	require.NoError(t, err)
	assert.Equal(t, "hello", string(p))
	n, err := q.Get(make([]byte, 3))
	assert.ErrorIs(t, err, ErrShortBuffer)
	assert.Equal(t, 5, n)
	assert.ErrorIs(t, q.Consume(), ErrEmpty, "a short Get cancels the peek")
	buf := make([]byte, 5)
	n, err = q.Get(buf)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(buf[:n]))
}

func TestRecordRingConcurrent(t *testing.T) {
	t.Parallel()
	q, err := InitRecordRing(ringMem(1024))
	require.NoError(t, err)
	total := uint64(rttest.Rounds(20000))
	go func() {
		var rec [24]byte
		for i := uint64(0); i < total; {
			binary.LittleEndian.PutUint64(rec[:], i)
			if q.Put(rec[:1+i%24]) == nil {
				i++
			}
		}
	}()
	buf := make([]byte, 64)
	for i := uint64(0); i < total; {
		n, err := q.Get(buf)
		if err == ErrEmpty {
			require.NoError(t, ignoreTimeout(q.Wait(sys.Nanotime()+int64(time.Second))))
			continue
		}
		require.NoError(t, err)
		require.Equal(t, int(1+i%24), n)
		var want [24]byte
		binary.LittleEndian.PutUint64(want[:], i)
		require.Equal(t, want[:n], buf[:n])
		i++
	}
}

func ignoreTimeout(err error) error {
	if err == ErrTimeout {
		return nil
	}
	return err
}

func TestRingWaitTimeoutAndClose(t *testing.T) {
	t.Parallel()
	q, err := InitRecordRing(ringMem(64))
	require.NoError(t, err)
	assert.ErrorIs(t, q.Wait(sys.Nanotime()+int64(time.Millisecond)), ErrTimeout)
	// The reader says, in the ring's sleeping word, that it is about to
	// sleep or sleeps; the writer writes only then, so the Put must wake
	// it (a reader that never slept fails the wait, not the test's luck).
	readerAsleep := func() bool { return atomic.LoadUint32(&q.r.h.sleeping) == 1 }
	got := make(chan error, 1)
	go func() { got <- q.Wait(0) }()
	rttest.WaitFor(t, "the reader asleep in Wait", readerAsleep)
	require.NoError(t, q.Put([]byte("x")))
	require.NoError(t, <-got, "a Put wakes the sleeping reader")
	// Close with a record left: Wait still returns it, then ErrClosed.
	q.Close()
	require.NoError(t, q.Wait(0), "a record is still there")
	_, err = q.Get(make([]byte, 8))
	require.NoError(t, err)
	assert.ErrorIs(t, q.Wait(0), ErrClosed)

	// Close wakes a reader asleep on an empty ring.
	q, err = InitRecordRing(ringMem(64))
	require.NoError(t, err)
	go func() { got <- q.Wait(0) }()
	rttest.WaitFor(t, "the reader asleep in Wait", readerAsleep)
	q.Close()
	require.ErrorIs(t, <-got, ErrClosed, "Close wakes the sleeping reader")
}

func TestStreamRing(t *testing.T) {
	t.Parallel()
	mem := ringMem(64)
	s, err := InitStreamRing(mem)
	require.NoError(t, err)
	buf := make([]byte, 100)
	n, err := s.Read(buf)
	assert.Zero(t, n)
	assert.ErrorIs(t, err, ErrEmpty)
	n, err = s.Read(nil)
	assert.Zero(t, n)
	assert.NoError(t, err, "an empty read of an empty ring")
	data := []byte("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!?")
	// Push bytes through in odd-sized chunks so every wrap offset occurs.
	var out []byte
	in := 0
	for round := range 200 {
		n, err := s.Write(data[in%len(data) : min(in%len(data)+round%23+1, len(data))])
		if err != nil {
			require.ErrorIs(t, err, ErrFull)
		}
		in += n
		m, err := s.Read(buf[:round%17+1])
		if err != nil {
			require.ErrorIs(t, err, ErrEmpty)
		}
		out = append(out, buf[:m]...)
	}
	for {
		m, err := s.Read(buf)
		if m == 0 {
			require.ErrorIs(t, err, ErrEmpty)
			break
		}
		out = append(out, buf[:m]...)
	}
	require.Len(t, out, in)
	for i, c := range out {
		require.Equal(t, data[i%len(data)], c, "byte %d", i)
	}
	dropped := s.Dropped()
	n, err = s.Write(make([]byte, 100))
	assert.Equal(t, 64, n, "a short write")
	assert.ErrorIs(t, err, ErrFull)
	assert.Equal(t, dropped+1, s.Dropped())
	assert.Equal(t, 64, s.Used())
	assert.ErrorIs(t, s.Wait(sys.Nanotime()+1), nil)
	s2, err := OpenStreamRing(mem)
	require.NoError(t, err)
	n, err = s2.Read(buf)
	assert.Equal(t, 64, n)
	assert.NoError(t, err)
	assert.ErrorIs(t, s2.Wait(sys.Nanotime()+int64(time.Millisecond)), ErrTimeout)
	s.Close()
	assert.ErrorIs(t, s2.Wait(0), ErrClosed)
	assert.Equal(t, 64, s.Capacity())
	assert.Zero(t, s.CorruptEvents()+s2.CorruptEvents())
}

func TestRingAllocs(t *testing.T) {
	q, _ := InitRecordRing(ringMem(4096))
	s, _ := InitStreamRing(ringMem(4096))
	rec := make([]byte, 32)
	buf := make([]byte, 64)
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = q.Put(rec)
		_, _ = q.Get(buf)
		b, _ := q.Reserve(16)
		b[0] = 1
		_ = q.Commit()
		_, _ = q.Peek()
		_ = q.Consume()
		_, _ = q.Get(buf) // empty
		_, _ = s.Write(rec)
		_, _ = s.Read(buf)
	}))
}

type ringSeg struct {
	Ready Semaphore
	_     [56]byte
}

const ringOffset = 64

func init() {
	// The writer child puts records numbered from 0, each filled with its
	// number, until it has put IPC_N of them or is killed.
	children["ring-writer"] = func(seg *shm.Segment) {
		q, err := OpenRecordRing(seg.Bytes()[ringOffset:])
		if err != nil {
			panic(err)
		}
		v, _ := shm.View[ringSeg](seg, 0)
		n, _ := strconv.ParseUint(os.Getenv("IPC_N"), 10, 64)
		size, _ := strconv.Atoi(os.Getenv("IPC_SIZE"))
		say("ready")
		_ = v.Ready.Take() // start together
		for i := uint64(0); i < n; {
			b, err := q.Reserve(size)
			if err != nil {
				continue // full: spin until the reader catches up
			}
			for j := 0; j+8 <= len(b); j += 8 {
				*(*uint64)(unsafe.Pointer(&b[j])) = i
			}
			_ = q.Commit()
			i++
		}
	}
}

func startRingWriter(tb testing.TB, capacity, n, size int) (*RecordRing, *ringSeg, *proc) {
	seg := newSeg(tb, ringOffset+RingSize(capacity))
	q, err := InitRecordRing(seg.Bytes()[ringOffset:])
	require.NoError(tb, err)
	v, err := shm.View[ringSeg](seg, 0)
	require.NoError(tb, err)
	p := startChild(tb, "ring-writer", seg, fmt.Sprintf("IPC_N=%d", n), fmt.Sprintf("IPC_SIZE=%d", size))
	p.expect(tb, "ready")
	return q, v, p
}

// A writer process SIGKILLed mid-stream: every record it committed is
// there, intact and in order; nothing half-written is visible.
func TestRecordRingWriterKilled(t *testing.T) {
	t.Parallel()
	q, v, p := startRingWriter(t, 1<<16, math.MaxInt, 40)
	require.NoError(t, v.Ready.Give())
	buf := make([]byte, 64)
	next := uint64(0)
	read := func() bool {
		n, err := q.Get(buf)
		if err == ErrEmpty {
			return false
		}
		require.NoError(t, err)
		require.Equal(t, 40, n)
		for j := 0; j+8 <= n; j += 8 {
			require.Equal(t, next, binary.LittleEndian.Uint64(buf[j:]), "record %d word %d", next, j/8)
		}
		next++
		return true
	}
	for next < 5000 {
		read()
	}
	p.kill(t)
	for read() {
	}
	t.Logf("read %d records before and after the kill", next)
	assert.Zero(t, q.Used(), "nothing half-written left behind")
}

func TestRecordRingCrossProcessBlockingReader(t *testing.T) {
	t.Parallel()
	const n = 20000
	q, v, p := startRingWriter(t, 4096, n, 16)
	require.NoError(t, v.Ready.Give())
	buf := make([]byte, 64)
	for i := uint64(0); i < n; {
		_, err := q.Get(buf)
		if err == ErrEmpty {
			require.NoError(t, ignoreTimeout(q.Wait(sys.Nanotime()+int64(5*time.Second))))
			continue
		}
		require.NoError(t, err)
		require.Equal(t, i, binary.LittleEndian.Uint64(buf))
		i++
	}
	p.wait(t)
}

// BenchmarkRecordRingCrossProcess measures records/s from a writer process
// to a polling reader in this process, 16-byte payloads (24 bytes with the
// header).
func BenchmarkRecordRingCrossProcess(b *testing.B) {
	benchRingCrossProcess(b, 16, 0)
}

func BenchmarkRecordRingCrossProcess8(b *testing.B) {
	benchRingCrossProcess(b, 8, 0)
}

// BenchmarkRecordRingCrossProcessBackoff is the same with a reader that,
// finding the ring empty, pauses briefly before polling again, as a
// draining consumer does: it stops pulling the head cache line across
// after every record.
func BenchmarkRecordRingCrossProcessBackoff(b *testing.B) {
	benchRingCrossProcess(b, 16, 200)
}

func benchRingCrossProcess(b *testing.B, size, backoff int) {
	q, v, p := startRingWriter(b, 1<<20, b.N, size)
	b.ResetTimer()
	_ = v.Ready.Give()
	for i := 0; i < b.N; {
		rec, err := q.Peek()
		if err != nil {
			for j := 0; j < backoff; j++ {
				spinSink++
			}
			continue
		}
		_ = rec[0]
		_ = q.Consume()
		i++
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrec/s")
	p.wait(b)
}

var spinSink int

func BenchmarkRecordRingInProcess(b *testing.B) {
	q, _ := InitRecordRing(ringMem(1 << 20))
	rec := make([]byte, 16)
	go func() {
		for i := 0; i < b.N; {
			if q.Put(rec) == nil {
				i++
			}
		}
	}()
	buf := make([]byte, 64)
	for i := 0; i < b.N; {
		if _, err := q.Get(buf); err == nil {
			i++
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrec/s")
}

func BenchmarkRecordRingPutGet(b *testing.B) {
	q, _ := InitRecordRing(ringMem(4096))
	rec := make([]byte, 16)
	buf := make([]byte, 64)
	for b.Loop() {
		_ = q.Put(rec)
		_, _ = q.Get(buf)
	}
}

// FuzzRecordRingGarbage feeds arbitrary bytes as ring memory (as another
// process scribbling on a segment would) before it is opened: Open and Peek
// return errors, never panic, never touch the guard page after the ring.
// FuzzRecordRingHostile corrupts it after open.
func FuzzRecordRingGarbage(f *testing.F) {
	f.Add([]byte{}, uint64(0), uint64(0))
	f.Add([]byte{5, 0, 0, 0, 0, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'}, uint64(16), uint64(0))
	f.Add([]byte{0xff, 0xff, 0, 0, 0, 0, 0, 0}, uint64(8), uint64(0))
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0, 0}, uint64(64), uint64(56))
	mem := guardedMem(f, RingSize(64))
	f.Fuzz(func(t *testing.T, data []byte, head, tail uint64) {
		if _, err := InitRecordRing(mem); err != nil {
			t.Fatal(err)
		}
		copy(mem[RingHeaderSize:], data)
		h := (*ringHeader)(unsafe.Pointer(&mem[0]))
		h.head, h.tail = head, tail
		q, err := OpenRecordRing(mem)
		if err != nil {
			return
		}
		buf := make([]byte, 64)
		for range 20 {
			p, err := q.Peek()
			if err != nil {
				return
			}
			if len(p) > q.MaxRecord() {
				t.Fatalf("record of %d bytes", len(p))
			}
			if _, err := q.Get(buf); err != nil && err != ErrShortBuffer {
				return
			}
		}
	})
}
