package ipc

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/gortapi/gortapi/internal/sys"
)

// RingHeaderSize is the bytes a ring's header takes in front of its data.
const RingHeaderSize = 256

const (
	ringMagic      = 0x474e_4952 // "RING"
	ringModeRecord = 1
	ringModeStream = 2
	recordHdr      = 8 // uint32 length, uint32 kind
	recordWrap     = 1 // kind: skip to the start of the buffer
	minCapacity    = 64
)

// ringHeader sits at the start of ring memory. Writer-owned and
// reader-owned words live on separate cache lines.
type ringHeader struct {
	_        align64
	magic    uint32 // ringMagic, stored last by Init
	mode     uint32
	capacity uint64
	_        [48]byte
	head     uint64 // bytes ever written; written by the producer only
	dropped  uint64 // puts refused because the ring was full
	_        [48]byte
	tail     uint64 // bytes ever consumed; written by the consumer only
	_        [56]byte
	sleeping uint32 // 1 while the consumer sleeps in Wait (futex word)
	closed   uint32
	_        [56]byte
}

var _ [RingHeaderSize - unsafe.Sizeof(ringHeader{})]struct{}
var _ [unsafe.Sizeof(ringHeader{}) - RingHeaderSize]struct{}

// RingSize returns the memory a ring with the given data capacity needs. The
// capacity is rounded up to a power of two (at least 64).
func RingSize(capacity int) int {
	if capacity < minCapacity {
		capacity = minCapacity
	}
	return RingHeaderSize + 1<<bits.Len(uint(capacity-1))
}

// ring is what both modes share: the header, the data and the index math.
type ring struct {
	h    *ringHeader
	data []byte
	mask uint64
	// Each side keeps a cached copy of the other side's index on its own
	// cache line and refreshes it only when the cached value says full
	// (producer) or empty (consumer), so the common path reads no line the
	// other side writes.
	_          [64]byte
	cachedTail uint64 // producer's view of tail
	resPos     uint64 // producer: reserved record position (+1), 0 = none
	resNeed    uint64
	_          [64]byte
	cachedHead uint64 // consumer's view of head
	peekNext   uint64 // consumer: tail after the peeked record, 0 = none
	_          [64]byte
}

func initRing(mem []byte, mode uint32) (*ring, error) {
	if err := checkRingMem(mem); err != nil {
		return nil, err
	}
	capacity := uint64(1) << (bits.Len(uint(len(mem)-RingHeaderSize)) - 1)
	h := (*ringHeader)(unsafe.Pointer(&mem[0]))
	atomic.StoreUint32(&h.magic, 0)
	h.mode = mode
	h.capacity = capacity
	atomic.StoreUint64(&h.head, 0)
	atomic.StoreUint64(&h.tail, 0)
	atomic.StoreUint64(&h.dropped, 0)
	atomic.StoreUint32(&h.sleeping, 0)
	atomic.StoreUint32(&h.closed, 0)
	atomic.StoreUint32(&h.magic, ringMagic)
	return newRing(mem, h), nil
}

func openRing(mem []byte, mode uint32) (*ring, error) {
	if err := checkRingMem(mem); err != nil {
		return nil, err
	}
	h := (*ringHeader)(unsafe.Pointer(&mem[0]))
	switch m := atomic.LoadUint32(&h.magic); {
	case m == 0:
		return nil, ErrNotInitialised
	case m != ringMagic:
		return nil, fmt.Errorf("%w: bad magic %#x", ErrCorrupt, m)
	}
	if h.mode != mode {
		return nil, fmt.Errorf("%w: memory holds a %s ring", ErrWrongMode, modeName(h.mode))
	}
	c := h.capacity
	if c < minCapacity || c&(c-1) != 0 || c > uint64(len(mem)-RingHeaderSize) {
		return nil, fmt.Errorf("%w: capacity %d in %d bytes", ErrCorrupt, c, len(mem))
	}
	if used := atomic.LoadUint64(&h.head) - atomic.LoadUint64(&h.tail); used > c {
		return nil, fmt.Errorf("%w: %d bytes used of %d", ErrCorrupt, used, c)
	}
	return newRing(mem, h), nil
}

func modeName(m uint32) string {
	switch m {
	case ringModeRecord:
		return "record"
	case ringModeStream:
		return "stream"
	}
	return fmt.Sprintf("mode-%d", m)
}

func checkRingMem(mem []byte) error {
	if len(mem) < RingHeaderSize+minCapacity {
		return fmt.Errorf("%w: ring memory is %d bytes, needs at least %d", ErrInvalid, len(mem), RingHeaderSize+minCapacity)
	}
	if uintptr(unsafe.Pointer(&mem[0]))%8 != 0 {
		return fmt.Errorf("%w: ring memory must be 8-byte aligned", ErrInvalid)
	}
	return nil
}

func newRing(mem []byte, h *ringHeader) *ring {
	c := h.capacity
	r := &ring{h: h, data: mem[RingHeaderSize : RingHeaderSize+c : RingHeaderSize+c], mask: c - 1}
	r.cachedTail = atomic.LoadUint64(&h.tail)
	r.cachedHead = atomic.LoadUint64(&h.head)
	return r
}

// publish makes head visible and wakes a sleeping consumer.
func (r *ring) publish(head uint64) {
	atomic.StoreUint64(&r.h.head, head)
	if atomic.LoadUint32(&r.h.sleeping) != 0 && atomic.CompareAndSwapUint32(&r.h.sleeping, 1, 0) {
		_, _ = sys.FutexWake(&r.h.sleeping, 1)
	}
}

// free returns the bytes the producer may write, refreshing its cached tail
// only when the cached value says there is not enough.
func (r *ring) free(head, need uint64) uint64 {
	f := uint64(len(r.data)) - (head - r.cachedTail)
	if f < need {
		r.cachedTail = atomic.LoadUint64(&r.h.tail)
		f = uint64(len(r.data)) - (head - r.cachedTail)
	}
	return f
}

// tail returns the consumer's position. The consumer is the only writer
// of h.tail, so this load hits its own cache line.
func (r *ring) tail() uint64 { return atomic.LoadUint64(&r.h.tail) }

// available returns the bytes the consumer may read from tail.
func (r *ring) available(tail uint64) uint64 {
	a := r.cachedHead - tail
	if a == 0 {
		r.cachedHead = atomic.LoadUint64(&r.h.head)
		a = r.cachedHead - tail
	}
	return a
}

// advance publishes the consumer's new position.
func (r *ring) advance(tail uint64) { atomic.StoreUint64(&r.h.tail, tail) }

func (r *ring) waitUntil(deadline int64, ready func() bool) error {
	for {
		if ready() {
			return nil
		}
		if atomic.LoadUint32(&r.h.closed) != 0 {
			return ErrClosed
		}
		atomic.StoreUint32(&r.h.sleeping, 1)
		if ready() { // the producer may have published before it saw sleeping
			atomic.StoreUint32(&r.h.sleeping, 0)
			return nil
		}
		var woken bool
		var err error
		if deadline == 0 {
			woken, err = sys.FutexWait(&r.h.sleeping, 1, 0)
		} else {
			woken, err = sys.FutexWaitUntil(&r.h.sleeping, 1, deadline)
		}
		atomic.StoreUint32(&r.h.sleeping, 0)
		if err != nil {
			return err
		}
		if !woken && !ready() {
			return ErrTimeout
		}
	}
}

// wake wakes a consumer blocked in Wait, for shutdown.
func (r *ring) wake() {
	atomic.StoreUint32(&r.h.sleeping, 0)
	_, _ = sys.FutexWake(&r.h.sleeping, 1)
}

// Dropped returns how many writes were refused because the ring was full.
//
// RT-safe.
func (r *ring) Dropped() uint64 { return atomic.LoadUint64(&r.h.dropped) }

// Capacity returns the data capacity in bytes.
func (r *ring) Capacity() int { return len(r.data) }

// Used returns the bytes written and not yet consumed (record headers and
// padding included).
//
// RT-safe.
func (r *ring) Used() int {
	return int(atomic.LoadUint64(&r.h.head) - atomic.LoadUint64(&r.h.tail))
}
