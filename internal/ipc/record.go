package ipc

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// RecordRing is a single-producer single-consumer ring of variable-length
// records (Machinekit's record ring). One goroutine (or process) writes,
// one reads; each record is stored as an 8-byte header and its payload
// padded to 8 bytes, so a payload is 8-byte aligned. A record never wraps:
// when it does not fit before the end, a skip marker fills the rest.
//
// The producer side (Put, Reserve, Commit) is wait-free: no allocation, no
// lock, never blocks; after publishing it issues one FUTEX_WAKE only if the
// consumer sleeps in Wait. The consumer side (Peek, Consume, Get) is also
// RT-safe; Wait blocks.
//
// A handle is process-local; the producer and the consumer may share one
// handle or each open their own on the same memory.
type RecordRing struct{ r ring }

// InitRecordRing lays out an empty record ring in mem (at least
// RingHeaderSize+64 bytes, 8-byte aligned; the capacity is the largest power
// of two that fits) and returns a handle. Call it once, in the process that
// created the memory, before anyone opens it; it discards any content.
func InitRecordRing(mem []byte) (*RecordRing, error) {
	r, err := initRing(mem, ringModeRecord)
	if err != nil {
		return nil, err
	}
	return &RecordRing{*r}, nil
}

// OpenRecordRing attaches to a record ring that InitRecordRing laid out in
// mem, keeping its content. ErrNotInitialised, ErrCorrupt or ErrWrongMode
// when mem does not hold one.
func OpenRecordRing(mem []byte) (*RecordRing, error) {
	r, err := openRing(mem, ringModeRecord)
	if err != nil {
		return nil, err
	}
	return &RecordRing{*r}, nil
}

// MaxRecord returns the largest payload a Put accepts.
func (q *RecordRing) MaxRecord() int { return len(q.r.data)/2 - recordHdr }

// errCorruptRecord is pre-built: Peek stays allocation-free even on a
// damaged ring.
var errCorruptRecord = fmt.Errorf("%w: record header inconsistent with the ring", ErrCorrupt)

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// Reserve returns n bytes of ring memory for the next record, to be filled
// and then published with Commit. ErrFull (counted in Dropped) when there is
// no room, ErrInvalid when n is negative or above MaxRecord. A second
// Reserve before Commit replaces the first.
//
// RT-safe: producer side.
func (q *RecordRing) Reserve(n int) ([]byte, error) {
	r := &q.r
	if n < 0 || n > q.MaxRecord() {
		return nil, ErrInvalid
	}
	need := align8(recordHdr + uint64(n))
	head := atomic.LoadUint64(&r.h.head)
	pos := head & r.mask
	toEnd := uint64(len(r.data)) - pos
	skip := uint64(0)
	if toEnd < need {
		skip = toEnd
	}
	if r.free(head, skip+need) < skip+need {
		atomic.AddUint64(&r.h.dropped, 1)
		return nil, ErrFull
	}
	if skip != 0 {
		q.setHdr(pos, 0, recordWrap)
		pos = 0
	}
	q.setHdr(pos, uint32(n), 0)
	r.resPos = head + skip + 1
	r.resNeed = need
	return r.data[pos+recordHdr : pos+recordHdr+uint64(n) : pos+recordHdr+uint64(n)], nil
}

// Commit publishes the record obtained from Reserve. ErrInvalid if there is
// no reservation.
//
// RT-safe: producer side.
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

// Put copies p into the ring as one record. ErrFull (counted in Dropped)
// when there is no room, ErrInvalid when p is larger than MaxRecord.
//
// RT-safe: producer side, wait-free.
func (q *RecordRing) Put(p []byte) error {
	b, err := q.Reserve(len(p))
	if err != nil {
		return err
	}
	copy(b, p)
	return q.Commit()
}

func (q *RecordRing) setHdr(pos uint64, n, kind uint32) {
	w := (*[2]uint32)(unsafe.Pointer(&q.r.data[pos]))
	w[0], w[1] = n, kind
}

// Peek returns the next record's payload without consuming it, ErrEmpty if
// there is none. The slice points into the ring and is valid until Consume.
//
// RT-safe: consumer side.
func (q *RecordRing) Peek() ([]byte, error) {
	r := &q.r
	for {
		tail := r.tail()
		if r.available(tail) == 0 {
			return nil, ErrEmpty
		}
		pos := tail & r.mask
		w := (*[2]uint32)(unsafe.Pointer(&r.data[pos]))
		n, kind := uint64(w[0]), w[1]
		avail := r.available(tail)
		if kind == recordWrap {
			skip := uint64(len(r.data)) - pos
			if skip > avail {
				return nil, errCorruptRecord
			}
			r.advance(tail + skip) // skip the padding
			continue
		}
		// Another process may have scribbled on the ring: never slice
		// past what the header and the producer vouch for.
		if kind != 0 || n > uint64(q.MaxRecord()) || pos+align8(recordHdr+n) > uint64(len(r.data)) ||
			align8(recordHdr+n) > avail {
			return nil, errCorruptRecord
		}
		r.peekNext = tail + align8(recordHdr+n) + 1
		return r.data[pos+recordHdr : pos+recordHdr+n : pos+recordHdr+n], nil
	}
}

// Consume drops the record returned by the last Peek; ErrEmpty if Peek did
// not return one.
//
// RT-safe: consumer side.
func (q *RecordRing) Consume() error {
	r := &q.r
	if r.peekNext == 0 {
		return ErrEmpty
	}
	r.advance(r.peekNext - 1)
	r.peekNext = 0
	return nil
}

// Get copies the next record into dst and consumes it, returning its
// length. ErrEmpty when there is none; ErrShortBuffer when dst is too
// small, with the record's length as n and the record left in place.
//
// RT-safe: consumer side.
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

// Wait blocks until a record is available or the absolute CLOCK_MONOTONIC
// deadline (ns; 0 = none) passes: nil, ErrTimeout, or ErrClosed after
// Close. Only the consumer may call it.
//
// Wait blocks: for the non-RT consumer. A polling consumer calls Peek
// instead.
func (q *RecordRing) Wait(deadlineNs int64) error {
	r := &q.r
	return r.waitUntil(deadlineNs, func() bool { return r.available(r.tail()) != 0 })
}

// Close marks the ring closed and wakes a consumer blocked in Wait, which
// returns ErrClosed once the ring is empty. Records already in the ring can
// still be read.
func (q *RecordRing) Close() {
	atomic.StoreUint32(&q.r.h.closed, 1)
	q.r.wake()
}

// Dropped returns how many records were refused because the ring was full.
//
// RT-safe.
func (q *RecordRing) Dropped() uint64 { return q.r.Dropped() }

// Capacity returns the data capacity in bytes.
func (q *RecordRing) Capacity() int { return q.r.Capacity() }

// Used returns the bytes of unread records, headers and padding included.
func (q *RecordRing) Used() int { return q.r.Used() }
