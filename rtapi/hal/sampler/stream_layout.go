package sampler

import (
	"fmt"
	"unsafe"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// StreamKey is the shared-memory key of streamer channel 0's FIFO
// ("STRM"); channel N uses StreamKey+N. LinuxCNC's STREAMER_SHMEM_KEY is
// 0x48535430 ("HST0"), for a segment laid out differently (hal_stream),
// so no key is shared.
const StreamKey = 0x5354524d

// Limits of a streamer channel.
const (
	// MaxStreamChannels bounds the cfg strings of one loadrt streamer
	// line (LinuxCNC's MAX_STREAMERS).
	MaxStreamChannels = 8
	// MaxStreamBytes bounds a channel's FIFO: depth times 8 bytes a pin.
	MaxStreamBytes = 1 << 26
)

const (
	streamMagic   = 0x4d52545352524f47 // "GORRSTRM" little-endian
	streamVersion = 1
	streamHeader  = 256
)

// streamHeaderT is the start of a streamer channel's segment. The host
// writes Magic last, after the geometry; a writer checks each field
// against what it computes itself. In is the writer's (halstreamer's)
// next slot, Out the streamer function's; each on its own cache line.
type streamHeaderT struct {
	Magic   uint64
	Version uint32
	NPins   uint32
	Depth   uint64 // slots: the FIFO holds Depth-1 samples, as hal_stream
	DataOff uint64
	_       [32]uint8
	In      uint32
	_       [60]uint8
	Out     uint32
	_       [60]uint8
	Cfg     [MaxPins]uint8
}

var _ [streamHeader - unsafe.Sizeof(streamHeaderT{})]struct{}
var _ [unsafe.Sizeof(streamHeaderT{}) - streamHeader]struct{}

// streamSize is the bytes of a channel's segment with depth slots of n
// pins; 0 when the FIFO would exceed MaxStreamBytes or depth is below 2
// (a FIFO of one slot never holds a sample).
func streamSize(n int, depth uint64) int {
	if n <= 0 || depth < 2 || depth > MaxStreamBytes/uint64(8*n) {
		return 0
	}
	return streamHeader + 8*n*int(depth)
}

// parseStreamCfg is ParseCfg for a streamer channel: the same letters
// (LinuxCNC's hal_stream_parse_types serves both).
func parseStreamCfg(cfg string) ([]hal.Type, error) {
	if cfg == "" || len(cfg) > MaxPins {
		return nil, fmt.Errorf("streamer: cfg %q: want 1 to %d letters: %w", cfg, MaxPins, rtapi.ErrInvalid)
	}
	types := make([]hal.Type, len(cfg))
	for i := range len(cfg) {
		t, ok := letters[lower(cfg[i])]
		if !ok {
			return nil, fmt.Errorf("streamer: cfg %q: letter %q is none of f r b s u l k: %w", cfg, cfg[i], rtapi.ErrInvalid)
		}
		types[i] = t
	}
	return types, nil
}

// streamDepth is hal_stream_depth: the samples between out and in in a
// FIFO of depth slots.
func streamDepth(in, out, depth uint32) int32 {
	if out > in {
		return int32(depth + in - out)
	}
	return int32(in - out)
}

// streamAdvance is hal_stream_advance: the slot after n.
func streamAdvance(n, depth uint32) uint32 {
	n++
	if n >= depth {
		return 0
	}
	return n
}

var errStreamIndex = fmt.Errorf("%w: FIFO index out of range", ErrCorrupt)
