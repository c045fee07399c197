package sampler

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// Key is the shared-memory key of sampler channel 0's ring ("SAMP");
// channel N uses Key+N. LinuxCNC's SAMPLER_SHMEM_KEY is 0x48534130
// ("HSA0"), for a segment laid out differently (hal_stream), so no key is
// shared.
const Key = 0x53414d50

// StreamKey is the shared-memory key of streamer channel 0's FIFO
// ("STRM"); channel N uses StreamKey+N. LinuxCNC's STREAMER_SHMEM_KEY is
// 0x48535430 ("HST0"), for a segment laid out differently (hal_stream),
// so no key is shared.
const StreamKey = 0x5354524d

// Limits of a channel.
const (
	// MaxPins bounds the letters of one cfg string.
	MaxPins = 64
	// MaxChannels bounds the cfg strings of one loadrt sampler line.
	MaxChannels = 16
	// MaxStreamChannels bounds the cfg strings of one loadrt streamer
	// line (LinuxCNC's MAX_STREAMERS).
	MaxStreamChannels = 8
	// DefaultDepth is a sampler channel's depth when depth= does not
	// give one.
	DefaultDepth = 1000
	// DefaultStreamDepth is a streamer channel's depth when depth= does
	// not give one (LinuxCNC has no default: it makes no channel).
	DefaultStreamDepth = 1000
	// MaxRingBytes bounds a sampler channel's ring: depth times the
	// record size (8 bytes per pin plus 32), rounded up to a power of two.
	MaxRingBytes = 1 << 26
	// MaxStreamBytes bounds a streamer channel's FIFO: depth times 8
	// bytes a pin.
	MaxStreamBytes = 1 << 26
)

// Record words ahead of the pin values in a sampler record.
const (
	wordCycle = iota
	wordTime
	wordDropped
	wordPins
)

const (
	layoutVersion = 2
	headerSize    = 256
)

// header is the start of every channel's segment, the sampler's and the
// streamer's alike. The host fills it in and stores Magic last
// (publish); a peer copies it once and checks each field against the
// geometry it computes from Cfg and Depth (kind.check). In and Out, each
// on its own cache line, are the streamer FIFO's indexes: In the
// writer's (halstreamer's) next slot, Out the streamer function's.
type header struct {
	Magic    uint64
	Version  uint32
	NPins    uint32
	Depth    uint64 // depth=: the sampler's records, the streamer's slots
	DataOff  uint64 // where the ring or FIFO starts: headerSize
	DataSize uint64 // its bytes
	_        [24]uint8
	In       uint32
	_        [60]uint8
	Out      uint32
	_        [60]uint8
	Cfg      [MaxPins]uint8 // the cfg letters
}

var _ [headerSize - unsafe.Sizeof(header{})]struct{}
var _ [unsafe.Sizeof(header{}) - headerSize]struct{}

// kind is what the sampler and the streamer do differently with one
// segment layout, one loader and one attach path.
type kind struct {
	name         string // the component: "sampler" or "streamer"
	key          uint32 // channel 0's segment key
	magic        uint64
	maxChannels  int
	defaultDepth uint64
	pinDir       hal.Dir // of the pins pin.M
	depthRule    string  // what dataSize accepts, for messages
	// dataSize is the bytes after the header for depth of n pins; 0
	// when it does not accept depth.
	dataSize func(n int, depth uint64) int
}

var (
	samplerKind = &kind{name: "sampler", key: Key, magic: 0x52504d4153524f47, // "GORSAMPR"
		maxChannels: MaxChannels, defaultDepth: DefaultDepth, pinDir: hal.In,
		depthRule: fmt.Sprintf("a ring of at most %d bytes", MaxRingBytes), dataSize: ringSize}
	streamerKind = &kind{name: "streamer", key: StreamKey, magic: 0x4d52545352524f47, // "GORRSTRM"
		maxChannels: MaxStreamChannels, defaultDepth: DefaultStreamDepth, pinDir: hal.Out,
		depthRule: fmt.Sprintf("2 slots or more, of at most %d bytes", MaxStreamBytes), dataSize: fifoSize}
)

// letters maps cfg letters to HAL types; r is f, as in LinuxCNC's
// hal_stream_parse_types.
var letters = map[byte]hal.Type{'f': hal.TypeFloat, 'r': hal.TypeFloat, 'b': hal.TypeBit, 's': hal.TypeS32,
	'u': hal.TypeU32, 'l': hal.TypeS64, 'k': hal.TypeU64}

// ParseCfg returns the pin types of a cfg string (letters of either
// case), for the sampler and the streamer alike.
func ParseCfg(cfg string) ([]hal.Type, error) {
	if cfg == "" || len(cfg) > MaxPins {
		return nil, fmt.Errorf("cfg %q: want 1 to %d letters: %w", cfg, MaxPins, rtapi.ErrInvalid)
	}
	types := make([]hal.Type, len(cfg))
	for i := range len(cfg) {
		c := cfg[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		t, ok := letters[c]
		if !ok {
			return nil, fmt.Errorf("cfg %q: letter %q is none of f r b s u l k: %w", cfg, cfg[i], rtapi.ErrInvalid)
		}
		types[i] = t
	}
	return types, nil
}

// recordBytes is the payload of one sampler record with n pins.
func recordBytes(n int) int { return 8 * (wordPins + n) }

// ringCapacity is the sampler ring's data capacity for depth records of
// n pins, each with an 8-byte header, plus one record's room for the
// skip at the wrap. Zero when it exceeds MaxRingBytes.
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

// ringSize is the sampler's dataSize: its record ring's bytes.
func ringSize(n int, depth uint64) int {
	if c := ringCapacity(n, depth); c != 0 {
		return ipc.RingSize(c)
	}
	return 0
}

// fifoSize is the streamer's dataSize: depth slots of n words; 0 when
// the FIFO would exceed MaxStreamBytes or depth is below 2 (a FIFO of one
// slot never holds a sample).
func fifoSize(n int, depth uint64) int {
	if n <= 0 || depth < 2 || depth > MaxStreamBytes/uint64(8*n) {
		return 0
	}
	return 8 * n * int(depth)
}

// load is the factory of both components: one channel per
// cfg=CFG[,CFG...] string, each with its depth=N[,N...] (k.defaultDepth
// if none), made by newChannel.
func (k *kind) load(h *hal.HAL, a *hal.LoadArgs, newChannel func(c *hal.Component, n int, cfg string, types []hal.Type, depth uint64) error) error {
	cfgArg, ok := a.Get("cfg")
	if !ok || cfgArg == "" {
		return fmt.Errorf("loadrt %s: no cfg= (e.g. cfg=ffb): %w", k.name, rtapi.ErrInvalid)
	}
	cfgs := strings.Split(cfgArg, ",")
	if len(cfgs) > k.maxChannels {
		return fmt.Errorf("loadrt %s: %d channels, at most %d: %w", k.name, len(cfgs), k.maxChannels, rtapi.ErrInvalid)
	}
	depths := make([]uint64, len(cfgs))
	for i := range depths {
		depths[i] = k.defaultDepth
	}
	if d, ok := a.Get("depth"); ok {
		list := strings.Split(d, ",")
		if len(list) > len(cfgs) {
			return fmt.Errorf("loadrt %s: %d depths for %d cfg strings: %w", k.name, len(list), len(cfgs), rtapi.ErrInvalid)
		}
		for i, s := range list {
			n, err := strconv.ParseUint(s, 0, 64)
			if err != nil || n == 0 {
				return fmt.Errorf("loadrt %s: depth %q: want a positive integer: %w", k.name, s, rtapi.ErrInvalid)
			}
			depths[i] = n
		}
	}
	types := make([][]hal.Type, len(cfgs))
	for i, cfg := range cfgs {
		t, err := ParseCfg(cfg)
		if err != nil {
			return fmt.Errorf("loadrt %s: %w", k.name, err)
		}
		if k.dataSize(len(t), depths[i]) == 0 {
			return fmt.Errorf("loadrt %s: channel %d: depth %d of %d pins: want %s: %w",
				k.name, i, depths[i], len(t), k.depthRule, rtapi.ErrInvalid)
		}
		types[i] = t
	}
	c, err := h.NewComponent(k.name)
	if err != nil {
		return err
	}
	for i := range cfgs {
		if err := newChannel(c, i, cfgs[i], types[i], depths[i]); err != nil {
			return err
		}
	}
	return c.Ready()
}

// newSegment makes channel n's segment, its header filled in but for
// Magic: the channel lays out its data, then publishes the header.
func (k *kind) newSegment(c *hal.Component, n int, cfg string, depth uint64) (*shm.Segment, *header, error) {
	size := k.dataSize(len(cfg), depth)
	seg, err := c.NewSegment(k.key+uint32(n), headerSize+size)
	if err != nil {
		return nil, nil, err
	}
	hdr := (*header)(unsafe.Pointer(&seg.Bytes()[0]))
	hdr.Version, hdr.NPins, hdr.Depth = layoutVersion, uint32(len(cfg)), depth
	hdr.DataOff, hdr.DataSize = headerSize, uint64(size)
	copy(hdr.Cfg[:], cfg)
	return seg, hdr, nil
}

// publish stores Magic, after everything else a peer checks.
func (k *kind) publish(hdr *header) { atomic.StoreUint64(&hdr.Magic, k.magic) }

// attach opens channel's segment of kind k in the segments o describes
// and hands it to open, which checks it (kind.check). An absent segment
// is shm.ErrNotExist.
func attach[T any](k *kind, o shm.Options, channel int, open func(*shm.Segment) (*T, error)) (*T, error) {
	if channel < 0 || channel >= k.maxChannels {
		return nil, fmt.Errorf("%s: channel %d: want 0 to %d: %w", k.name, channel, k.maxChannels-1, rtapi.ErrInvalid)
	}
	seg, err := shm.Attach(o, k.key+uint32(channel))
	if err != nil {
		return nil, fmt.Errorf("%s channel %d: %w", k.name, channel, err)
	}
	v, err := open(seg)
	if err != nil {
		seg.Close()
		return nil, fmt.Errorf("%s channel %d (%s): %w", k.name, channel, seg.Name(), err)
	}
	return v, nil
}

// check copies seg's header once and checks every field against the
// geometry that its own Cfg and Depth imply: a segment the host of kind k
// cannot have written is ErrCorrupt. It returns the copy and the pins'
// types; only they may be used, never the segment's header again.
func (k *kind) check(seg *shm.Segment) (header, []hal.Type, error) {
	mem := seg.Bytes()
	if len(mem) < headerSize {
		return header{}, nil, fmt.Errorf("%w: %d bytes, less than a header", ErrCorrupt, len(mem))
	}
	var h header
	hp := (*header)(unsafe.Pointer(&mem[0]))
	if err := seg.Guard(func() {
		h.Magic = atomic.LoadUint64(&hp.Magic)
		h.Version, h.NPins, h.Depth, h.DataOff, h.DataSize, h.Cfg = hp.Version, hp.NPins, hp.Depth, hp.DataOff, hp.DataSize, hp.Cfg
		h.In, h.Out = atomic.LoadUint32(&hp.In), atomic.LoadUint32(&hp.Out)
	}); err != nil {
		return header{}, nil, err
	}
	if h.Magic != k.magic {
		return header{}, nil, fmt.Errorf("%w: not a %s segment (magic %#x)", ErrCorrupt, k.name, h.Magic)
	}
	if h.Version != layoutVersion {
		return header{}, nil, fmt.Errorf("%w: layout version %d, this build knows %d", ErrCorrupt, h.Version, layoutVersion)
	}
	if h.NPins == 0 || h.NPins > MaxPins {
		return header{}, nil, fmt.Errorf("%w: %d pins", ErrCorrupt, h.NPins)
	}
	types, err := ParseCfg(string(h.Cfg[:h.NPins]))
	if err != nil {
		return header{}, nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	size := uint64(k.dataSize(len(types), h.Depth))
	if size == 0 || h.DataOff != headerSize || h.DataSize != size || headerSize+size > uint64(len(mem)) {
		return header{}, nil, fmt.Errorf("%w: %d bytes at %d in %d, want %d at %d for depth %d of %d pins",
			ErrCorrupt, h.DataSize, h.DataOff, len(mem), size, headerSize, h.Depth, len(types))
	}
	return h, types, nil
}

// peer is what a Reader and a Writer share: the segment they attached
// and the pins' types.
type peer struct {
	kind  *kind
	seg   *shm.Segment
	types []hal.Type
}

// Types returns the pins' types, in cfg order.
func (p *peer) Types() []hal.Type { return p.types }

// Name is the channel's segment name.
func (p *peer) Name() string { return p.seg.Name() }

// Close detaches the segment.
func (p *peer) Close() error { return p.seg.Close() }

// hostExited is rtapi.ErrClosed, naming the host, once the process that
// made the segment has exited; else nil.
func (p *peer) hostExited() error {
	if pid := p.seg.CreatorPID(); !processAlive(pid) {
		return fmt.Errorf("%s %s: host %d exited: %w", p.kind.name, p.seg.Name(), pid, rtapi.ErrClosed)
	}
	return nil
}

// pin is one pin.M of a channel: the handle of its type.
type pin struct {
	typ hal.Type
	f   hal.Float
	b   hal.Bit
	s   hal.S32
	u   hal.U32
	l   hal.S64
	k   hal.U64
}

// newPins makes the pins prefix.pin.M of types, in dir.
func newPins(c *hal.Component, prefix string, types []hal.Type, dir hal.Dir) []pin {
	pins := make([]pin, len(types))
	for i, t := range types {
		name := fmt.Sprintf("%s.pin.%d", prefix, i)
		p := &pins[i]
		p.typ = t
		switch t {
		case hal.TypeFloat:
			p.f = c.Float(name, dir)
		case hal.TypeBit:
			p.b = c.Bit(name, dir)
		case hal.TypeS32:
			p.s = c.S32(name, dir)
		case hal.TypeU32:
			p.u = c.U32(name, dir)
		case hal.TypeS64:
			p.l = c.S64(name, dir)
		case hal.TypeU64:
			p.k = c.U64(name, dir)
		}
	}
	return pins
}
