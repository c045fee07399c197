package ipc

import (
	"sync/atomic"
	"unsafe"
)

// Seqlock publishes snapshots of a pointer-free value T from one writer to
// any number of readers, in shared memory or in one process. It keeps two
// copies: the writer fills the copy readers are not directed to, then bumps
// the sequence, so
//
//   - the writer never waits (Write is wait-free);
//   - a reader retries only when a Write completed while it was copying, and
//     never returns a torn value;
//   - a writer that dies mid-Write (SIGKILL) leaves the last completed
//     snapshot readable: readers never stall on it.
//
// The zero value holds a zero T at sequence 0. T must be pointer-free (the
// shm view checks refuse it otherwise). Only one goroutine or process may
// write at a time; serialise several writers with a Mutex.
//
// Copies go through 64-bit atomic loads and stores so that the race
// detector sees a correct program.
type Seqlock[T any] struct {
	_     align64
	seq   uint64
	_     [56]byte
	slots [2]seqSlot[T]
}

// seqSlot pads T to a multiple of 8 bytes at 8-byte alignment.
type seqSlot[T any] struct {
	_ align64
	v T
}

// align64 gives a struct 8-byte alignment on every architecture. Go aligns
// uint64 to only 4 bytes on 386 and arm, where a 64-bit atomic on such a
// word panics; an atomic.Uint64 is 8-byte aligned everywhere, and an array
// of none of them takes no space. Shared layouts whose 64-bit words are
// accessed atomically start with it, so that a View at a misaligned
// offset is refused instead of panicking.
type align64 [0]atomic.Uint64

// Write publishes *v as the new snapshot. It is wait-free.
// RT-safe.
func (s *Seqlock[T]) Write(v *T) {
	next := atomic.LoadUint64(&s.seq) + 1
	storeWords(&s.slots[next&1], v)
	atomic.StoreUint64(&s.seq, next)
}

// Read copies the latest complete snapshot into *v and returns its
// sequence number (0 before the first Write). It retries while Writes
// complete during the copy, so it loops as long as the writer completes
// Writes faster than one copy. A writer in another process can do that on
// purpose; where the writer is not trusted, use ReadBounded.
// RT-safe.
func (s *Seqlock[T]) Read(v *T) uint64 {
	for {
		if seq, ok := s.TryRead(v); ok {
			return seq
		}
	}
}

// ReadBounded is Read with at most maxTries attempts (at least one): after
// maxTries copies that each raced a completed Write it returns ErrBusy, and
// *v holds a torn value to discard. It is the read for a seqlock in a
// segment that another, untrusted process writes: that process can make
// every attempt fail, but not keep the reader looping.
// RT-safe.
func (s *Seqlock[T]) ReadBounded(v *T, maxTries int) (uint64, error) {
	for range max(maxTries, 1) {
		if seq, ok := s.TryRead(v); ok {
			return seq, nil
		}
	}
	return 0, ErrBusy
}

// TryRead makes one attempt: ok is false when a Write completed during the
// copy (*v may then hold a torn value and must be discarded).
// RT-safe.
func (s *Seqlock[T]) TryRead(v *T) (seq uint64, ok bool) {
	// The sequence is loaded once; its low bit picks one of the two slots,
	// so whatever another process wrote into it, the copy stays inside the
	// seqlock.
	s1 := atomic.LoadUint64(&s.seq)
	loadWords(v, &s.slots[s1&1])
	return s1, atomic.LoadUint64(&s.seq) == s1
}

// Seq returns the sequence number of the latest snapshot: it grows by one
// per Write.
// RT-safe.
func (s *Seqlock[T]) Seq() uint64 { return atomic.LoadUint64(&s.seq) }

func storeWords[T any](dst *seqSlot[T], src *T) {
	n := unsafe.Sizeof(*src)
	words := unsafe.Slice((*uint64)(unsafe.Pointer(dst)), unsafe.Sizeof(*dst)/8)
	full := int(n / 8)
	if unsafe.Alignof(*src) >= 8 {
		sw := unsafe.Slice((*uint64)(unsafe.Pointer(src)), full)
		for i, w := range sw {
			atomic.StoreUint64(&words[i], w)
		}
	} else {
		sb := unsafe.Slice((*byte)(unsafe.Pointer(src)), n)
		for i := range full {
			atomic.StoreUint64(&words[i], wordOf(sb[i*8:i*8+8]))
		}
	}
	if tail := n % 8; tail != 0 {
		sb := unsafe.Slice((*byte)(unsafe.Pointer(src)), n)
		atomic.StoreUint64(&words[full], wordOf(sb[full*8:]))
	}
}

func loadWords[T any](dst *T, src *seqSlot[T]) {
	n := unsafe.Sizeof(*dst)
	words := unsafe.Slice((*uint64)(unsafe.Pointer(src)), unsafe.Sizeof(*src)/8)
	full := int(n / 8)
	if unsafe.Alignof(*dst) >= 8 {
		dw := unsafe.Slice((*uint64)(unsafe.Pointer(dst)), full)
		for i := range dw {
			dw[i] = atomic.LoadUint64(&words[i])
		}
	} else {
		db := unsafe.Slice((*byte)(unsafe.Pointer(dst)), n)
		for i := range full {
			putWord(db[i*8:i*8+8], atomic.LoadUint64(&words[i]))
		}
	}
	if tail := n % 8; tail != 0 {
		db := unsafe.Slice((*byte)(unsafe.Pointer(dst)), n)
		putWord(db[full*8:], atomic.LoadUint64(&words[full]))
	}
}

// wordOf packs up to 8 bytes little-endian.
func wordOf(b []byte) uint64 {
	var w uint64
	for i, c := range b {
		w |= uint64(c) << (8 * i)
	}
	return w
}

func putWord(b []byte, w uint64) {
	for i := range b {
		b[i] = byte(w >> (8 * i))
	}
}
