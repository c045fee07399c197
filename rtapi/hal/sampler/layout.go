package sampler

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/ipc"
)

// Key is the shared-memory key of channel 0's ring ("SAMP"); channel N
// uses Key+N. LinuxCNC's SAMPLER_SHMEM_KEY is 0x48534130 ("HSA0"), for a
// segment laid out differently (hal_stream), so no key is shared.
const Key = 0x53414d50

// Limits of a channel.
const (
	// MaxPins bounds the letters of one cfg string.
	MaxPins = 64
	// MaxChannels bounds the cfg strings of one loadrt line.
	MaxChannels = 16
	// DefaultDepth is a channel's depth when depth= does not give one.
	DefaultDepth = 1000
	// MaxRingBytes bounds a channel's ring: depth times the record size
	// (8 bytes per pin plus 32), rounded up to a power of two.
	MaxRingBytes = 1 << 26
)

// Record words ahead of the pin values.
const (
	wordCycle = iota
	wordTime
	wordDropped
	wordPins
)

const (
	layoutMagic   = 0x52504d4153524f47 // "GORSAMPR" little-endian
	layoutVersion = 1
	headerSize    = 256
)

// header is the start of a channel's segment, written once before Magic;
// a reader checks each field against what it computes itself.
type header struct {
	Magic    uint64
	Version  uint32
	NPins    uint32
	Depth    uint64 // the depth asked for
	RingOff  uint64
	RingSize uint64
	_        [24]uint8
	Cfg      [MaxPins]uint8 // the cfg letters
	_        [headerSize - 64 - MaxPins]uint8
}

var _ [headerSize - unsafe.Sizeof(header{})]struct{}
var _ [unsafe.Sizeof(header{}) - headerSize]struct{}

// letters maps cfg letters to HAL types; r is f, as in LinuxCNC's
// hal_stream_parse_types.
var letters = map[byte]hal.Type{'f': hal.TypeFloat, 'r': hal.TypeFloat, 'b': hal.TypeBit, 's': hal.TypeS32,
	'u': hal.TypeU32, 'l': hal.TypeS64, 'k': hal.TypeU64}

// ParseCfg returns the pin types of a cfg string (letters of either case).
func ParseCfg(cfg string) ([]hal.Type, error) {
	if cfg == "" || len(cfg) > MaxPins {
		return nil, fmt.Errorf("sampler: cfg %q: want 1 to %d letters: %w", cfg, MaxPins, rtapi.ErrInvalid)
	}
	types := make([]hal.Type, len(cfg))
	for i := range len(cfg) {
		t, ok := letters[lower(cfg[i])]
		if !ok {
			return nil, fmt.Errorf("sampler: cfg %q: letter %q is none of f r b s u l k: %w", cfg, cfg[i], rtapi.ErrInvalid)
		}
		types[i] = t
	}
	return types, nil
}

// recordBytes is the payload of one record with n pins.
func recordBytes(n int) int { return 8 * (wordPins + n) }

// ringCapacity is the ring's data capacity for depth records of n pins,
// each with an 8-byte header, plus one record's room for the skip at the
// wrap. Zero when it exceeds MaxRingBytes.
func ringCapacity(n int, depth uint64) int {
	per := uint64(recordBytes(n) + 8)
	if depth == 0 || depth > MaxRingBytes/per {
		return 0
	}
	c := 1 << bits.Len64((depth+1)*per-1)
	if c > MaxRingBytes {
		return 0
	}
	return c
}

// segmentSize is the bytes a channel's segment takes.
func segmentSize(capacity int) int { return headerSize + ipc.RingSize(capacity) }

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
