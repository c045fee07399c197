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

// ringHeader starts ring memory; each side's words have their own cache line.
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
	return RingHeaderSize + 1<<bits.Len(uint(max(capacity, minCapacity)-1))
}

// ring is what both modes share: the header, the data and the index math.
// The header is untrusted (see RecordRing): geometry and each side's own
// position are kept here, the other side's is loaded once and checked.
type ring struct {
	h     *ringHeader
	data  []byte // exactly the capacity: the private geometry
	mask  uint64
	align uint64 // positions are multiples of this: 8 (records) or 1 (bytes)
	// Each side's fields have their own cache line; its cached copy of the
	// other side's position is refreshed only when it says full or empty.
	_          [64]byte
	head       uint64 // producer: bytes ever written, published to h.head
	cachedTail uint64 // producer's view of tail, validated
	resPos     uint64 // producer: reserved record position (+1), 0 = none
	resNeed    uint64
	_          [64]byte
	tail       uint64 // consumer: bytes ever consumed, published to h.tail
	cachedHead uint64 // consumer's view of head, validated
	peekNext   uint64 // consumer: tail after the peeked record, 0 = none
	_          [64]byte
	corrupt    atomic.Uint64 // inconsistent shared state seen by this handle
}

func alignOf(mode uint32) uint64 {
	if mode == ringModeRecord {
		return recordHdr
	}
	return 1
}

// init lays out an empty ring in mem and attaches r to it.
func (r *ring) init(mem []byte, mode uint32) error {
	if err := checkRingMem(mem); err != nil {
		return err
	}
	capacity := uint64(1) << (bits.Len(uint(len(mem)-RingHeaderSize)) - 1)
	h := (*ringHeader)(unsafe.Pointer(&mem[0]))
	atomic.StoreUint32(&h.magic, 0)
	atomic.StoreUint32(&h.mode, mode)
	atomic.StoreUint64(&h.capacity, capacity)
	atomic.StoreUint64(&h.head, 0)
	atomic.StoreUint64(&h.tail, 0)
	atomic.StoreUint64(&h.dropped, 0)
	atomic.StoreUint32(&h.sleeping, 0)
	atomic.StoreUint32(&h.closed, 0)
	atomic.StoreUint32(&h.magic, ringMagic)
	r.attach(mem, h, mode, capacity, 0, 0)
	return nil
}

// open attaches r to the ring in mem, built from checked private copies of
// the header fields only.
func (r *ring) open(mem []byte, mode uint32) error {
	if err := checkRingMem(mem); err != nil {
		return err
	}
	h := (*ringHeader)(unsafe.Pointer(&mem[0]))
	switch m := atomic.LoadUint32(&h.magic); {
	case m == 0:
		return ErrNotInitialised
	case m != ringMagic:
		return fmt.Errorf("%w: bad magic %#x", ErrCorrupt, m)
	}
	if m := atomic.LoadUint32(&h.mode); m != mode {
		return fmt.Errorf("%w: memory holds a %s ring", ErrWrongMode, modeName(m))
	}
	c := atomic.LoadUint64(&h.capacity)
	if c < minCapacity || c&(c-1) != 0 || c > uint64(len(mem)-RingHeaderSize) {
		return fmt.Errorf("%w: capacity %d in %d bytes", ErrCorrupt, c, len(mem))
	}
	head, tail := atomic.LoadUint64(&h.head), atomic.LoadUint64(&h.tail)
	if used := head - tail; used > c {
		return fmt.Errorf("%w: %d bytes used of %d", ErrCorrupt, used, c)
	}
	if a := alignOf(mode); head%a != 0 || tail%a != 0 {
		return fmt.Errorf("%w: head %d or tail %d not a multiple of %d", ErrCorrupt, head, tail, a)
	}
	r.attach(mem, h, mode, c, head, tail)
	return nil
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

// attach sets the handle's private geometry and checked positions.
func (r *ring) attach(mem []byte, h *ringHeader, mode uint32, capacity, head, tail uint64) {
	r.h = h
	r.data = mem[RingHeaderSize : RingHeaderSize+capacity : RingHeaderSize+capacity]
	r.mask = capacity - 1
	r.align = alignOf(mode)
	r.head, r.cachedTail = head, tail
	r.tail, r.cachedHead = tail, head
}

var errCorruptIndex = fmt.Errorf("%w: head or tail inconsistent with the ring", ErrCorrupt)

// corrupted counts one sighting of bad shared state and returns err.
func (r *ring) corrupted(err error) error {
	r.corrupt.Add(1)
	return err
}

// publish makes head visible and wakes a sleeping consumer.
func (r *ring) publish(head uint64) {
	r.head = head
	atomic.StoreUint64(&r.h.head, head)
	if atomic.LoadUint32(&r.h.sleeping) != 0 && atomic.CompareAndSwapUint32(&r.h.sleeping, 1, 0) {
		_, _ = sys.FutexWake(&r.h.sleeping, 1)
	}
}

// free returns the bytes the producer may write at r.head, refreshing its
// cached tail only when that says fewer than need.
func (r *ring) free(need uint64) (uint64, error) {
	if f := uint64(len(r.data)) - (r.head - r.cachedTail); f >= need {
		return f, nil
	}
	return r.refreshTail()
}

// refreshTail loads and checks the consumer's published tail. A tail the
// consumer cannot have reached is ErrCorrupt, and the producer puts its own
// head back, so a consumer that Discarded to a forged head finds it again.
func (r *ring) refreshTail() (uint64, error) {
	tail := atomic.LoadUint64(&r.h.tail)
	if tail%r.align != 0 || r.head-tail > uint64(len(r.data)) {
		return 0, r.producerCorrupt()
	}
	r.cachedTail = tail
	return uint64(len(r.data)) - (r.head - tail), nil
}

// available returns the bytes the consumer may read from r.tail (ErrEmpty
// when none), refreshing its cached head only when that says none.
func (r *ring) available() (uint64, error) {
	if a := r.cachedHead - r.tail; a != 0 {
		return a, nil
	}
	return r.refreshHead()
}

// refreshHead loads and checks the producer's published head.
func (r *ring) refreshHead() (uint64, error) {
	head := atomic.LoadUint64(&r.h.head)
	a := head - r.tail
	if a-1 >= uint64(len(r.data)) || head%r.align != 0 {
		return 0, r.emptyOrCorrupt(head)
	}
	r.cachedHead = head
	return a, nil
}

// emptyOrCorrupt finishes a head load that found nothing to read: ErrEmpty
// or ErrCorrupt. Either way it puts back the consumer's own tail, so that a
// producer refused by a forged tail recovers.
func (r *ring) emptyOrCorrupt(head uint64) error {
	if head == r.tail {
		r.restoreTail()
		return ErrEmpty
	}
	return r.consumerCorrupt()
}

// producerCorrupt counts a bad tail and puts back the producer's own head:
// a consumer stuck on a bad head cannot put back its tail until it sees one.
func (r *ring) producerCorrupt() error {
	r.restoreHead()
	return r.corrupted(errCorruptIndex)
}

// full counts a refused write and puts back the producer's own head: a
// full ring's consumer stuck on a bad head would otherwise never free room.
func (r *ring) full() error {
	atomic.AddUint64(&r.h.dropped, 1)
	r.restoreHead()
	return ErrFull
}

// restoreHead puts back the producer's position if a peer overwrote it.
func (r *ring) restoreHead() {
	if atomic.LoadUint64(&r.h.head) != r.head {
		atomic.StoreUint64(&r.h.head, r.head)
	}
}

// consumerCorrupt counts a bad head and puts back the consumer's own tail.
func (r *ring) consumerCorrupt() error {
	r.restoreTail()
	return r.corrupted(errCorruptIndex)
}

// restoreTail puts back the consumer's position if a peer overwrote it.
func (r *ring) restoreTail() {
	if atomic.LoadUint64(&r.h.tail) != r.tail {
		atomic.StoreUint64(&r.h.tail, r.tail)
	}
}

// advance moves the consumer to tail and publishes it.
func (r *ring) advance(tail uint64) {
	r.tail = tail
	atomic.StoreUint64(&r.h.tail, tail)
}

// discard moves the consumer to the published head.
func (r *ring) discard() (int, error) {
	head := atomic.LoadUint64(&r.h.head)
	if head%r.align != 0 {
		return 0, r.consumerCorrupt()
	}
	skipped := head - r.tail
	r.cachedHead = head
	r.advance(head)
	return int(min(skipped, uint64(len(r.data)))), nil
}

// readable reports whether the consumer has data or damage to report.
func (r *ring) readable() bool {
	a, err := r.available()
	return a != 0 || (err != nil && err != ErrEmpty)
}

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

// Dropped, Capacity, Used and CorruptEvents back the ring types' methods
// of those names.
func (r *ring) Dropped() uint64 { return atomic.LoadUint64(&r.h.dropped) }

func (r *ring) Capacity() int { return len(r.data) }

func (r *ring) Used() int {
	u := atomic.LoadUint64(&r.h.head) - atomic.LoadUint64(&r.h.tail)
	return int(min(u, uint64(len(r.data))))
}

func (r *ring) CorruptEvents() uint64 { return r.corrupt.Load() }
