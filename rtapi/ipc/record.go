package ipc

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gortapi/gortapi/rtapi/shm"
)

// RecordRing is a single-producer single-consumer ring of variable-length
// records (Machinekit's record ring), each payload 8-byte aligned. Only Wait
// blocks; the producer side is wait-free and makes a FUTEX_WAKE only when
// the consumer sleeps in Wait.
//
// A handle is process-local. Producer and consumer may share one or open one
// each, but each side uses one handle only.
//
// The header and records are untrusted: a handle keeps the capacity and its
// own side's position privately, loads the other side's position and each
// record header once, and checks them. A value the other side cannot have
// written is ErrCorrupt, counted in CorruptEvents (which no peer can reset);
// the consumer goes on with Discard. A hostile writer can still feed wrong
// records and refuse or drop good ones.
type RecordRing struct {
	r   ring
	seg *shm.Segment // the segment holding the ring (RecordRingAt), for Guard
}

// Guard calls f, which uses the ring, under the Guard of the ring's segment
// (RecordRingAt; see shm.Segment.Guard): a truncated segment is a
// *shm.TruncatedError instead of a crash, a closed one shm.ErrClosed. A
// ring in process memory just runs f.
func (q *RecordRing) Guard(f func()) error {
	if q.seg == nil {
		f()
		return nil
	}
	return q.seg.Guard(f)
}

// InitRecordRing lays out an empty record ring in mem (at least
// RingHeaderSize+64 bytes, 8-byte aligned; capacity the largest power of two
// that fits) and returns a handle. Call it once, before anyone opens it.
func InitRecordRing(mem []byte) (*RecordRing, error) {
	q := new(RecordRing)
	if err := q.r.init(mem, ringModeRecord); err != nil {
		return nil, err
	}
	return q, nil
}

// OpenRecordRing attaches to a record ring that InitRecordRing laid out in
// mem, keeping its content. ErrNotInitialised, ErrCorrupt or ErrWrongMode
// when mem does not hold one.
func OpenRecordRing(mem []byte) (*RecordRing, error) {
	q := new(RecordRing)
	if err := q.r.open(mem, ringModeRecord); err != nil {
		return nil, err
	}
	return q, nil
}

// MaxRecord returns the largest payload a Put accepts.
func (q *RecordRing) MaxRecord() int { return len(q.r.data)/2 - recordHdr }

var errCorruptRecord = fmt.Errorf("%w: record header inconsistent with the ring", ErrCorrupt)

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// Reserve returns n bytes of ring memory for the next record, to fill and
// publish with Commit: ErrFull (counted in Dropped), ErrInvalid when n is
// out of [0, MaxRecord], or ErrCorrupt. A second Reserve replaces the first.
// Only the producer may call it.
// RT-safe.
func (q *RecordRing) Reserve(n int) ([]byte, error) {
	r := &q.r
	r.resPos = 0
	if n < 0 || n > q.MaxRecord() {
		return nil, ErrInvalid
	}
	need := align8(recordHdr + uint64(n))
	pos := r.head & r.mask // r.head is a multiple of 8, so pos+8 <= capacity
	skip := uint64(0)
	if toEnd := uint64(len(r.data)) - pos; toEnd < need {
		skip = toEnd
	}
	if free := uint64(len(r.data)) - (r.head - r.cachedTail); free < skip+need {
		free, err := r.refreshTail() // the cached tail says full: look again
		if err != nil {
			return nil, err
		}
		if free < skip+need {
			return nil, r.full()
		}
	}
	if skip != 0 {
		q.setHdr(pos, 0, recordWrap)
		pos = 0
	}
	q.setHdr(pos, uint32(n), 0)
	r.resPos = r.head + skip + 1
	r.resNeed = need
	return r.data[pos+recordHdr : pos+recordHdr+uint64(n) : pos+recordHdr+uint64(n)], nil
}

// Commit publishes the record obtained from Reserve. ErrInvalid if there is
// no reservation. Only the producer may call it.
// RT-safe.
func (q *RecordRing) Commit() error {
	r := &q.r
	if r.resPos == 0 {
		return ErrInvalid
	}
	head := r.resPos - 1 + r.resNeed
	r.resPos = 0
	r.publish(head)
	return nil
}

// Put copies p into the ring as one record; errors as for Reserve. Only the
// producer may call it.
// RT-safe.
func (q *RecordRing) Put(p []byte) error {
	b, err := q.Reserve(len(p))
	if err != nil {
		return err
	}
	copy(b, p)
	return q.Commit()
}

// setHdr writes a record header at pos, a multiple of 8 below the capacity.
func (q *RecordRing) setHdr(pos uint64, n, kind uint32) {
	w := (*[2]uint32)(unsafe.Pointer(&q.r.data[pos]))
	w[0], w[1] = n, kind
}

// hdr loads the record header at pos, a multiple of 8 below the capacity.
func (q *RecordRing) hdr(pos uint64) (n uint64, kind uint32) {
	w := (*[2]uint32)(unsafe.Pointer(&q.r.data[pos]))
	return uint64(atomic.LoadUint32(&w[0])), atomic.LoadUint32(&w[1])
}

// Peek returns the next record's payload without consuming it: ErrEmpty if
// there is none, ErrCorrupt (the consumer stays put; Discard goes on). The
// slice points into the ring, valid until Consume; a peer may change its
// bytes meanwhile. Only the consumer may call it.
// RT-safe.
func (q *RecordRing) Peek() ([]byte, error) {
	r := &q.r
	avail := r.cachedHead - r.tail
	if avail == 0 {
		// refreshHead inlined: a polling consumer is here most of the time.
		head := atomic.LoadUint64(&r.h.head)
		avail = head - r.tail
		if avail-1 >= uint64(len(r.data)) || head%recordHdr != 0 {
			return nil, r.emptyOrCorrupt(head)
		}
		r.cachedHead = head
	}
	pos := r.tail & r.mask
	n, kind := q.hdr(pos)
	if kind == recordWrap {
		// A real wrap marker is never at 0, and a record follows it.
		skip := uint64(len(r.data)) - pos
		if pos == 0 || skip >= avail {
			return nil, r.corrupted(errCorruptRecord)
		}
		r.advance(r.tail + skip)
		avail -= skip
		pos = 0
		n, kind = q.hdr(0)
	}
	need := align8(recordHdr + n)
	if kind != 0 || n > uint64(q.MaxRecord()) || need > avail || pos+need > uint64(len(r.data)) {
		return nil, r.corrupted(errCorruptRecord)
	}
	r.peekNext = r.tail + need + 1
	return r.data[pos+recordHdr : pos+recordHdr+n : pos+recordHdr+n], nil
}

// Consume drops the record returned by the last Peek; ErrEmpty if Peek did
// not return one. Only the consumer may call it.
// RT-safe.
func (q *RecordRing) Consume() error {
	r := &q.r
	if r.peekNext == 0 {
		return ErrEmpty
	}
	r.advance(r.peekNext - 1)
	r.peekNext = 0
	return nil
}

// Get copies the next record into dst, consumes it and returns its length.
// ErrShortBuffer leaves the record in place and returns its length; other
// errors as for Peek. Only the consumer may call it.
// RT-safe.
func (q *RecordRing) Get(dst []byte) (int, error) {
	p, err := q.Peek()
	if err != nil {
		return 0, err
	}
	if len(p) > len(dst) {
		q.r.peekNext = 0
		return len(p), ErrShortBuffer
	}
	n := copy(dst, p)
	return n, q.Consume()
}

// Discard drops every record the ring holds, moving the consumer to the
// producer's published position, and returns the bytes skipped: how to go
// on after ErrCorrupt. ErrCorrupt when that position is unaligned. Once a
// hostile writer stops, the sides resync within one more ErrCorrupt and
// Discard. Only the consumer may call it.
// RT-safe.
func (q *RecordRing) Discard() (int, error) {
	q.r.peekNext = 0
	return q.r.discard()
}

// Wait blocks until Peek has a record or an error to return, or the absolute
// CLOCK_MONOTONIC deadline (ns; 0 = none) passes: nil, ErrTimeout, or
// ErrClosed after Close. Only the consumer may call it.
func (q *RecordRing) Wait(deadlineNs int64) error {
	r := &q.r
	return r.waitUntil(deadlineNs, r.readable)
}

// Close marks the ring closed and wakes Wait, which returns ErrClosed once
// the ring is empty.
func (q *RecordRing) Close() {
	atomic.StoreUint32(&q.r.h.closed, 1)
	q.r.wake()
}

// Dropped returns how many records were refused because the ring was full.
// RT-safe.
func (q *RecordRing) Dropped() uint64 { return q.r.Dropped() }

// Capacity returns the data capacity in bytes.
// RT-safe.
func (q *RecordRing) Capacity() int { return q.r.Capacity() }

// Used returns the bytes of unread records, headers and padding included
// (at most the capacity).
// RT-safe.
func (q *RecordRing) Used() int { return q.r.Used() }

// CorruptEvents returns how many times this handle returned ErrCorrupt.
// RT-safe.
func (q *RecordRing) CorruptEvents() uint64 { return q.r.CorruptEvents() }
