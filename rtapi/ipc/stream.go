package ipc

import "sync/atomic"

// StreamRing is a single-producer single-consumer byte stream (Machinekit's
// stream ring) with no record boundaries. Write and Read are wait-free;
// Write makes a FUTEX_WAKE only when the consumer sleeps in Wait.
// Handles and shared state are as for RecordRing.
type StreamRing struct{ r ring }

// InitStreamRing lays out an empty stream ring in mem (see InitRecordRing).
func InitStreamRing(mem []byte) (*StreamRing, error) {
	q := new(StreamRing)
	if err := q.r.init(mem, ringModeStream); err != nil {
		return nil, err
	}
	return q, nil
}

// OpenStreamRing attaches to a stream ring laid out by InitStreamRing.
func OpenStreamRing(mem []byte) (*StreamRing, error) {
	q := new(StreamRing)
	if err := q.r.open(mem, ringModeStream); err != nil {
		return nil, err
	}
	return q, nil
}

// Write copies as much of p as fits and returns how many bytes it wrote: a
// short write is ErrFull (one drop); ErrCorrupt writes nothing. Only the
// producer may call it.
// RT-safe.
func (s *StreamRing) Write(p []byte) (int, error) {
	r := &s.r
	free, err := r.free(uint64(len(p)))
	if err != nil {
		return 0, err
	}
	n := min(uint64(len(p)), free)
	if n != 0 {
		pos := r.head & r.mask
		c := copy(r.data[pos:], p[:n])
		copy(r.data, p[c:n])
		r.publish(r.head + n)
	}
	if n < uint64(len(p)) {
		return int(n), r.full()
	}
	return int(n), nil
}

// Read copies up to len(p) available bytes into p and returns how many:
// ErrEmpty when there are none and p is not empty, or ErrCorrupt. Only the
// consumer may call it.
// RT-safe.
func (s *StreamRing) Read(p []byte) (int, error) {
	r := &s.r
	if len(p) == 0 {
		return 0, nil
	}
	avail, err := r.available()
	if err != nil {
		return 0, err
	}
	n := min(uint64(len(p)), avail)
	pos := r.tail & r.mask
	c := copy(p[:n], r.data[pos:])
	copy(p[c:n], r.data)
	r.advance(r.tail + n)
	return int(n), nil
}

// Discard drops every byte the ring holds, as RecordRing.Discard does. Only
// the consumer may call it.
// RT-safe.
func (s *StreamRing) Discard() (int, error) { return s.r.discard() }

// Wait is RecordRing.Wait for Read. Only the consumer may call it.
func (s *StreamRing) Wait(deadlineNs int64) error {
	return s.r.waitUntil(deadlineNs, s.r.readable)
}

// Close marks the ring closed and wakes a consumer blocked in Wait.
func (s *StreamRing) Close() {
	atomic.StoreUint32(&s.r.h.closed, 1)
	s.r.wake()
}

// Dropped returns how many writes were short because the ring was full.
// RT-safe.
func (s *StreamRing) Dropped() uint64 { return s.r.Dropped() }

// Capacity returns the data capacity in bytes.
// RT-safe.
func (s *StreamRing) Capacity() int { return s.r.Capacity() }

// Used returns the bytes written and not yet read (at most the capacity).
// RT-safe.
func (s *StreamRing) Used() int { return s.r.Used() }

// CorruptEvents returns how many times this handle returned ErrCorrupt.
// RT-safe.
func (s *StreamRing) CorruptEvents() uint64 { return s.r.CorruptEvents() }
