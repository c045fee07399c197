package ipc

import "sync/atomic"

// StreamRing is a single-producer single-consumer byte stream (Machinekit's
// stream ring): writes and reads move as many bytes as fit, with no record
// boundaries.
//
// Write and Read are wait-free and RT-safe: no allocation, no lock, never
// block; Write issues one FUTEX_WAKE only if the consumer sleeps in Wait.
type StreamRing struct{ r ring }

// InitStreamRing lays out an empty stream ring in mem (see InitRecordRing).
func InitStreamRing(mem []byte) (*StreamRing, error) {
	r, err := initRing(mem, ringModeStream)
	if err != nil {
		return nil, err
	}
	return &StreamRing{*r}, nil
}

// OpenStreamRing attaches to a stream ring laid out by InitStreamRing.
func OpenStreamRing(mem []byte) (*StreamRing, error) {
	r, err := openRing(mem, ringModeStream)
	if err != nil {
		return nil, err
	}
	return &StreamRing{*r}, nil
}

// Write copies as much of p as fits and returns how many bytes it wrote; a
// short write counts one drop in Dropped.
//
// RT-safe: producer side, wait-free.
func (s *StreamRing) Write(p []byte) int {
	r := &s.r
	head := atomic.LoadUint64(&r.h.head)
	n := min(uint64(len(p)), r.free(head, uint64(len(p))))
	if n < uint64(len(p)) {
		atomic.AddUint64(&r.h.dropped, 1)
	}
	if n == 0 {
		return 0
	}
	pos := head & r.mask
	c := copy(r.data[pos:], p[:n])
	copy(r.data, p[c:n])
	r.publish(head + n)
	return int(n)
}

// Read copies up to len(p) available bytes into p and returns how many.
//
// RT-safe: consumer side, wait-free.
func (s *StreamRing) Read(p []byte) int {
	r := &s.r
	tail := r.tail()
	n := min(uint64(len(p)), r.available(tail))
	if n == 0 {
		return 0
	}
	pos := tail & r.mask
	c := copy(p[:n], r.data[pos:])
	copy(p[c:n], r.data)
	r.advance(tail + n)
	return int(n)
}

// Wait blocks until bytes are available or the absolute CLOCK_MONOTONIC
// deadline (ns; 0 = none) passes: nil, ErrTimeout, or ErrClosed after Close.
// Only the consumer may call it; it blocks.
func (s *StreamRing) Wait(deadlineNs int64) error {
	r := &s.r
	return r.waitUntil(deadlineNs, func() bool { return r.available(r.tail()) != 0 })
}

// Close marks the ring closed and wakes a consumer blocked in Wait.
func (s *StreamRing) Close() {
	atomic.StoreUint32(&s.r.h.closed, 1)
	s.r.wake()
}

// Dropped returns how many writes were short because the ring was full.
func (s *StreamRing) Dropped() uint64 { return s.r.Dropped() }

// Capacity returns the data capacity in bytes.
func (s *StreamRing) Capacity() int { return s.r.Capacity() }

// Used returns the bytes written and not yet read.
func (s *StreamRing) Used() int { return s.r.Used() }
