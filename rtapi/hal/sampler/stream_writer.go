package sampler

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// ErrFull is Writer.TryWrite's answer when the FIFO holds depth-1
// samples.
var ErrFull = fmt.Errorf("streamer: FIFO full: %w", rtapi.ErrBusy)

// Writer fills one streamer channel's FIFO from another process
// (halstreamer). It is the FIFO's only writer: two Writers of one
// channel corrupt each other's samples. A Writer is for one goroutine.
type Writer struct {
	seg   *shm.Segment
	hdr   *streamHeaderT
	data  []uint64
	types []hal.Type
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
	if channel < 0 || channel >= MaxStreamChannels {
		return nil, fmt.Errorf("streamer: channel %d: want 0 to %d: %w", channel, MaxStreamChannels-1, rtapi.ErrInvalid)
	}
	seg, err := shm.Attach(o, StreamKey+uint32(channel))
	if err != nil {
		return nil, fmt.Errorf("streamer channel %d: %w", channel, err)
	}
	w, err := openWriter(seg)
	if err != nil {
		seg.Close()
		return nil, fmt.Errorf("streamer channel %d (%s): %w", channel, seg.Name(), err)
	}
	return w, nil
}

func openWriter(seg *shm.Segment) (*Writer, error) {
	mem := seg.Bytes()
	if len(mem) < streamHeader {
		return nil, fmt.Errorf("%w: %d bytes, less than a header", ErrCorrupt, len(mem))
	}
	var h streamHeaderT // a copy of the geometry, read once
	var in uint32
	hp := (*streamHeaderT)(unsafe.Pointer(&mem[0]))
	if err := seg.Guard(func() {
		h.Magic = atomic.LoadUint64(&hp.Magic)
		h.Version, h.NPins, h.Depth, h.DataOff, h.Cfg = hp.Version, hp.NPins, hp.Depth, hp.DataOff, hp.Cfg
		in = atomic.LoadUint32(&hp.In)
	}); err != nil {
		return nil, err
	}
	if h.Magic != streamMagic {
		return nil, fmt.Errorf("%w: not a streamer segment (magic %#x)", ErrCorrupt, h.Magic)
	}
	if h.Version != streamVersion {
		return nil, fmt.Errorf("%w: layout version %d, this writer knows %d", ErrCorrupt, h.Version, streamVersion)
	}
	if h.NPins == 0 || h.NPins > MaxPins {
		return nil, fmt.Errorf("%w: %d pins", ErrCorrupt, h.NPins)
	}
	types, err := parseStreamCfg(string(h.Cfg[:h.NPins]))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	size := streamSize(len(types), h.Depth)
	if size == 0 || h.DataOff != streamHeader || size > len(mem) {
		return nil, fmt.Errorf("%w: depth %d of %d pins in %d bytes", ErrCorrupt, h.Depth, len(types), len(mem))
	}
	if uint64(in) >= h.Depth {
		return nil, fmt.Errorf("%w: in %d of %d slots", errStreamIndex, in, h.Depth)
	}
	return &Writer{seg: seg, hdr: hp, types: types, depth: uint32(h.Depth), in: in, Poll: time.Millisecond,
		data: unsafe.Slice((*uint64)(unsafe.Pointer(&mem[streamHeader])), len(types)*int(h.Depth))}, nil
}

// Types returns the pins' types, in cfg order: one value of each makes a
// sample.
func (w *Writer) Types() []hal.Type { return w.types }

// Name is the channel's segment name.
func (w *Writer) Name() string { return w.seg.Name() }

// Depth returns the FIFO's slots; it holds one sample fewer.
func (w *Writer) Depth() int { return int(w.depth) }

// Buffered returns the samples in the FIFO now. The streamer may take
// some at any time. A damaged index is ErrCorrupt.
func (w *Writer) Buffered() (int, error) {
	var out uint32
	if err := w.seg.Guard(func() { out = atomic.LoadUint32(&w.hdr.Out) }); err != nil {
		return 0, err
	}
	if out >= w.depth {
		return 0, fmt.Errorf("%w: out %d of %d slots", errStreamIndex, out, w.depth)
	}
	return int(streamDepth(w.in, out, w.depth)), nil
}

// Fill returns the samples in the FIFO now, reading both indexes from
// the segment: for a monitor that is not the FIFO's writer. A damaged
// index is ErrCorrupt.
func (w *Writer) Fill() (int, error) {
	var in, out uint32
	if err := w.seg.Guard(func() { in, out = atomic.LoadUint32(&w.hdr.In), atomic.LoadUint32(&w.hdr.Out) }); err != nil {
		return 0, err
	}
	if in >= w.depth || out >= w.depth {
		return 0, fmt.Errorf("%w: in %d, out %d of %d slots", errStreamIndex, in, out, w.depth)
	}
	return int(streamDepth(in, out, w.depth)), nil
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
	next := streamAdvance(w.in, w.depth)
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
		if pid := w.seg.CreatorPID(); !processAlive(pid) {
			return fmt.Errorf("streamer %s: host %d exited: %w", w.seg.Name(), pid, rtapi.ErrClosed)
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

// Close detaches the segment.
func (w *Writer) Close() error { return w.seg.Close() }
