package sampler

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// ErrCorrupt reports a channel segment or record that the sampler cannot
// have written (rtapi.ErrCorrupt).
var ErrCorrupt = fmt.Errorf("sampler: ring corrupt: %w", rtapi.ErrCorrupt)

// errShortRecord is pre-built: Next allocates nothing on a bad record.
var errShortRecord = fmt.Errorf("%w: record of the wrong length", ErrCorrupt)

// Sample is one cycle's record.
type Sample struct {
	// Cycle counts calls from 0; a gap means drops or a disabled sampler.
	Cycle uint64
	// Time is the Func's now: ns on the host flavor's clock.
	Time int64
	// Dropped counts samples dropped on a full ring before this one.
	Dropped uint64
	// Values are the pins' words in cfg order (hal.FormatValue prints
	// one). The slice is the Reader's and is overwritten by the next Next.
	Values []uint64
}

// Reader reads one sampler channel's ring (halsampler). Next consumes, so
// two readers of one channel share its samples. A Reader is for one
// goroutine.
type Reader struct {
	peer
	ring  *ipc.RecordRing
	buf   []uint64
	bytes []byte // buf's memory
	slot  int    // bytes of one record in the ring, its header included
	poll  time.Duration
	get   func() // r.getRecord, bound once: Guard's argument allocates nothing
	n     int    // getRecord's results
	err   error
}

// Attach opens channel's ring in the segments o describes. A header that
// does not match the geometry its own cfg and depth imply is ErrCorrupt;
// an absent segment is shm.ErrNotExist.
func Attach(o shm.Options, channel int) (*Reader, error) {
	return attach(samplerKind, o, channel, open)
}

// open checks an attached segment and reads it.
func open(seg *shm.Segment) (*Reader, error) {
	h, types, err := samplerKind.check(seg)
	if err != nil {
		return nil, err
	}
	ring, err := ipc.RecordRingAt(seg, headerSize, int(h.DataSize))
	if err != nil {
		return nil, err
	}
	if c := ringCapacity(len(types), h.Depth); ring.Capacity() != c {
		return nil, fmt.Errorf("%w: ring capacity %d, want %d", ErrCorrupt, ring.Capacity(), c)
	}
	r := &Reader{peer: peer{samplerKind, seg, types}, ring: ring, buf: make([]uint64, wordPins+len(types)),
		poll: 100 * time.Millisecond, slot: recordBytes(len(types)) + 8}
	r.bytes = unsafe.Slice((*byte)(unsafe.Pointer(&r.buf[0])), 8*len(r.buf))
	r.get = r.getRecord
	return r, nil
}

func (r *Reader) getRecord() { r.n, r.err = r.ring.Get(r.bytes) }

// Buffered returns how many samples wait in the ring now, at most what
// the ring can hold whatever the segment says. The sampler may add some
// and another reader take some at any time. After a truncation it returns
// shm.ErrTruncated.
func (r *Reader) Buffered() (int, error) {
	var used int
	if err := r.ring.Guard(func() { used = r.ring.Used() }); err != nil {
		return 0, err
	}
	return used / r.slot, nil // a wrap's padding is less than a record
}

// TryNext returns the next sample if one is waiting: ipc.ErrEmpty if none,
// ErrCorrupt for a bad record (the reader then skips what the ring holds),
// shm.ErrTruncated after a truncation. It allocates only on damage.
func (r *Reader) TryNext() (Sample, error) {
	if gerr := r.ring.Guard(r.get); gerr != nil {
		return Sample{}, gerr
	}
	n, err := r.n, r.err
	if errors.Is(err, ipc.ErrCorrupt) || errors.Is(err, ipc.ErrShortBuffer) || (err == nil && n != len(r.bytes)) {
		_ = r.ring.Guard(func() { _, _ = r.ring.Discard() })
		if err == nil || errors.Is(err, ipc.ErrShortBuffer) {
			err = errShortRecord
		}
		return Sample{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if err != nil {
		return Sample{}, err
	}
	return Sample{Cycle: r.buf[wordCycle], Time: int64(r.buf[wordTime]), Dropped: r.buf[wordDropped], Values: r.buf[wordPins:]}, nil
}

// Next blocks for the next sample until deadline (zero: none), then
// returns rtapi.ErrTimeout; rtapi.ErrClosed once the host has exited and
// the ring is drained; else as TryNext. It allocates only on errors.
func (r *Reader) Next(deadline time.Time) (Sample, error) {
	for {
		s, err := r.TryNext()
		if !errors.Is(err, ipc.ErrEmpty) {
			return s, err
		}
		wait := r.poll
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return Sample{}, rtapi.ErrTimeout
			}
			wait = min(wait, left)
		}
		werr := r.ring.Wait(rtapi.MonotonicNow() + int64(wait))
		if !errors.Is(werr, ipc.ErrTimeout) {
			continue
		}
		if gone := r.hostExited(); gone != nil {
			if s, err := r.TryNext(); !errors.Is(err, ipc.ErrEmpty) {
				return s, err
			}
			return Sample{}, gone
		}
	}
}
