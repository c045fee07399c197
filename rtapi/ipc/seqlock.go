package ipc

import (
	"sync/atomic"
	"unsafe"
)

// Seqlock publishes snapshots of a pointer-free value T from one writer to
// any number of readers. The writer fills the copy readers are not directed
// to, then bumps the sequence: Write never waits, a reader never returns a
// torn value, and a writer killed mid-Write leaves the last snapshot
// readable.
//
// The zero value holds a zero T at sequence 0. Only one goroutine or process
// may write at a time; serialise several writers with a Mutex. The sequence's
// low bit picks one of two slots, so any value a peer writes keeps reads
// inside the seqlock; a peer bumping it without end keeps Read looping, so
// read an untrusted segment with ReadBounded.
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

// align64 gives a struct 8-byte alignment on every architecture (a plain
// uint64 is 4-byte aligned on 386 and arm), so a View at a misaligned offset
// is refused instead of panicking on a 64-bit atomic.
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
// complete during the copy.
// RT-safe.
func (s *Seqlock[T]) Read(v *T) uint64 {
	for {
		if seq, ok := s.TryRead(v); ok {
			return seq
		}
	}
}

// ReadBounded is Read with at most maxTries attempts (at least one); then
// it returns ErrBusy and *v holds a torn value to discard.
// RT-safe.
func (s *Seqlock[T]) ReadBounded(v *T, maxTries int) (uint64, error) {
	for range max(maxTries, 1) {
		if seq, ok := s.TryRead(v); ok {
			return seq, nil
		}
	}
	return 0, ErrBusy
}

// TryRead makes one attempt: ok is false, and *v torn, when a Write
// completed during the copy.
// RT-safe.
func (s *Seqlock[T]) TryRead(v *T) (seq uint64, ok bool) {
	s1 := atomic.LoadUint64(&s.seq)
	loadWords(v, &s.slots[s1&1])
	return s1, atomic.LoadUint64(&s.seq) == s1
}

// Seq returns the latest snapshot's sequence number, one more per Write.
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
