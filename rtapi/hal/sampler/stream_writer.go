package sampler

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// ErrFull is Writer.TryWrite's answer when the FIFO holds depth-1
// samples.
var ErrFull = fmt.Errorf("streamer: FIFO full: %w", rtapi.ErrBusy)

// Writer fills one streamer channel's FIFO from another process
// (halstreamer). It is the FIFO's only writer: two Writers of one
// channel corrupt each other's samples. A Writer is for one goroutine.
type Writer struct {
	peer
	hdr   *header
	data  []uint64
	depth uint32
	in    uint32
	// Poll is how long Write sleeps between looks at a full FIFO
	// (LinuxCNC's halstreamer sleeps 10 ms).
	Poll time.Duration
}

// AttachWriter opens streamer channel's FIFO in the segments o describes.
// A header that does not match the geometry its own cfg and depth imply
// is ErrCorrupt; an absent segment is shm.ErrNotExist.
func AttachWriter(o shm.Options, channel int) (*Writer, error) {
	return attach(streamerKind, o, channel, openWriter)
}

// openWriter checks an attached segment and writes to it.
func openWriter(seg *shm.Segment) (*Writer, error) {
	h, types, err := streamerKind.check(seg)
	if err != nil {
		return nil, err
	}
	if _, ok := fifoFill(h.In, 0, uint32(h.Depth)); !ok {
		return nil, fmt.Errorf("%w: in %d of %d slots", errFIFOIndex, h.In, h.Depth)
	}
	mem := seg.Bytes()
	return &Writer{peer: peer{streamerKind, seg, types}, hdr: (*header)(unsafe.Pointer(&mem[0])), depth: uint32(h.Depth),
		in: h.In, Poll: time.Millisecond, data: fifoData(mem, len(types), h.Depth)}, nil
}

// Depth returns the FIFO's slots; it holds one sample fewer.
func (w *Writer) Depth() int { return int(w.depth) }

// Buffered returns the samples in the FIFO now. The streamer may take
// some at any time. A damaged index is ErrCorrupt.
func (w *Writer) Buffered() (int, error) {
	var out uint32
	if err := w.seg.Guard(func() { out = atomic.LoadUint32(&w.hdr.Out) }); err != nil {
		return 0, err
	}
	return w.fill(w.in, out)
}

// Fill returns the samples in the FIFO now, reading both indexes from
// the segment: for a monitor that is not the FIFO's writer. A damaged
// index is ErrCorrupt.
func (w *Writer) Fill() (int, error) {
	var in, out uint32
	if err := w.seg.Guard(func() { in, out = atomic.LoadUint32(&w.hdr.In), atomic.LoadUint32(&w.hdr.Out) }); err != nil {
		return 0, err
	}
	return w.fill(in, out)
}

func (w *Writer) fill(in, out uint32) (int, error) {
	n, ok := fifoFill(in, out, w.depth)
	if !ok {
		return 0, fmt.Errorf("%w: in %d, out %d of %d slots", errFIFOIndex, in, out, w.depth)
	}
	return int(n), nil
}

// TryWrite appends one sample: values holds one word per pin, as
// hal.FormatValue reads them (a float's bits, a bit 0 or 1, an integer
// sign-extended). It returns ErrFull when the FIFO holds depth-1 samples.
func (w *Writer) TryWrite(values []uint64) error {
	if len(values) != len(w.types) {
		return fmt.Errorf("streamer: %d values for %d pins: %w", len(values), len(w.types), rtapi.ErrInvalid)
	}
	n, err := w.Buffered()
	if err != nil {
		return err
	}
	if n >= int(w.depth)-1 {
		return ErrFull
	}
	next := fifoAdvance(w.in, w.depth)
	row := int(w.in) * len(w.types)
	if err := w.seg.Guard(func() {
		copy(w.data[row:row+len(w.types)], values)
		atomic.StoreUint32(&w.hdr.In, next)
	}); err != nil {
		return err
	}
	w.in = next
	return nil
}

// processAlive reports whether the host that made a segment still runs;
// tests replace it.
var processAlive = sys.ProcessAlive

// Write appends one sample as TryWrite, waiting Poll at a time while the
// FIFO is full, until ctx ends (then ctx's error) or the host that made
// the FIFO has exited (then rtapi.ErrClosed).
func (w *Writer) Write(ctx context.Context, values []uint64) error {
	for {
		err := w.TryWrite(values)
		if err != ErrFull {
			return err
		}
		if gone := w.hostExited(); gone != nil {
			return gone
		}
		t := time.NewTimer(w.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
