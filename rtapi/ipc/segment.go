package ipc

import (
	"fmt"

	"github.com/gortapi/gortapi/rtapi/shm"
)

// segmentMem checks and slices [off, off+size) of seg for a ring.
func segmentMem(op string, seg *shm.Segment, off, size int) ([]byte, error) {
	mem := seg.Bytes()
	if mem == nil {
		return nil, fmt.Errorf("ipc.%s: segment %s: %w", op, seg.Name(), ErrClosed)
	}
	if off < 0 || size < 0 || off > len(mem) || size > len(mem)-off || off%64 != 0 {
		return nil, fmt.Errorf("ipc.%s: ring at [%d, %d+%d) must be 64-byte aligned inside the %d-byte segment %s: %w",
			op, off, off, size, len(mem), seg.Name(), ErrInvalid)
	}
	return mem[off : off+size : off+size], nil
}

// RecordRingAt returns the record ring in [off, off+size) of seg (off
// 64-byte aligned; size from RingSize). The segment's creator lays it out;
// others open it and get ErrNotInitialised, to retry, until it has.
func RecordRingAt(seg *shm.Segment, off, size int) (*RecordRing, error) {
	mem, err := segmentMem("RecordRingAt", seg, off, size)
	if err != nil {
		return nil, err
	}
	var q *RecordRing
	if gerr := seg.Guard(func() {
		if seg.Created() {
			q, err = InitRecordRing(mem)
		} else {
			q, err = OpenRecordRing(mem)
		}
	}); gerr != nil {
		return nil, fmt.Errorf("ipc.RecordRingAt: %w", gerr)
	}
	if err != nil {
		return nil, err
	}
	q.seg = seg
	return q, nil
}

// StreamRingAt is RecordRingAt for a byte-stream ring.
func StreamRingAt(seg *shm.Segment, off, size int) (*StreamRing, error) {
	mem, err := segmentMem("StreamRingAt", seg, off, size)
	if err != nil {
		return nil, err
	}
	if seg.Created() {
		return InitStreamRing(mem)
	}
	return OpenStreamRing(mem)
}

// MutexAt returns the Mutex at offset off of seg (shm.View[Mutex]).
func MutexAt(seg *shm.Segment, off int) (*Mutex, error) { return shm.View[Mutex](seg, off) }

// SemaphoreAt returns the Semaphore at offset off of seg.
func SemaphoreAt(seg *shm.Segment, off int) (*Semaphore, error) {
	return shm.View[Semaphore](seg, off)
}

// SeqlockAt returns the Seqlock[T] at offset off of seg; T must be
// pointer-free.
func SeqlockAt[T any](seg *shm.Segment, off int) (*Seqlock[T], error) {
	return shm.View[Seqlock[T]](seg, off)
}
