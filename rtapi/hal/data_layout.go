package hal

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"unsafe"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// The data segment's design: HACKING.md, "The HAL's segments".

// Limits of the data segment.
const (
	MaxComps   = 128
	MaxPins    = 2048
	MaxParams  = 1024
	MaxSignals = 1024
)

const (
	dataMagic = 0x314154414c414847 // "GHALATA1", little-endian
	// dataVersion 2 moved every value word out of its entry into the
	// values area (dataValues); layout 1 readers refuse it, and back.
	dataVersion = 2
)

type dataHeader struct {
	_          [0]atomic.Uint64
	Magic      uint64
	Version    uint32
	NameLen    uint32
	MaxComps   uint32
	MaxPins    uint32
	MaxParams  uint32
	MaxSignals uint32
	HostPID    int64
	NComps     int64 // atomic: entries visible
	NPins      int64
	NParams    int64
	NSignals   int64
	// Gen is odd while links or signal counts change; readers check it twice.
	Gen    uint64
	Closed int64
	_      [40]byte // to 128 bytes
}

// compEntry is a component: 64 bytes.
type compEntry struct {
	_     [0]atomic.Uint64
	Name  [NameLen]byte
	PID   int64  // the process that owns it
	Ready uint32 // atomic: 1 after hal_ready
	ID    uint32 // atomic: the component's id (show's Owner), set when made
}

// pinEntry is a pin: 64 bytes. Its own word ("dummysig"), what it reads
// and writes while unlinked, is Values.Pins at its slot.
type pinEntry struct {
	_      uint64 // layout 1's value word: 0
	Name   [NameLen]byte
	Comp   uint16
	Type   uint8
	Dir    uint8
	Signal uint32 // atomic: index of the linked signal + 1; 0 when unlinked
}

// paramEntry is a parameter: 64 bytes; its value is Values.Params at its
// slot.
type paramEntry struct {
	_    uint64 // layout 1's value word: 0
	Name [NameLen]byte
	Comp uint16
	Type uint8
	Dir  uint8
	_    uint32
}

// sigEntry is a signal: 64 bytes; its value is Values.Signals at its slot.
// Info packs, so that a reader loads them together: type (bits 0-7), live
// (8), writers (16-31), readers (32-47), bidirs (48-63).
type sigEntry struct {
	_    uint64 // layout 1's value word: 0
	Name [NameLen]byte
	Info uint64 // atomic
}

// dataValues is the values area: the pins', parameters' and signals'
// 64-bit words (atomic), packed by slot. Slots are taken in creation
// order, so a component's pins share cache lines, as the pins LinuxCNC's
// hal_malloc gives a component do: a chain's working set stays small
// enough for L1 (docs/BENCHMARKS.md, issue 41).
type dataValues struct {
	Pins    [MaxPins]uint64
	Params  [MaxParams]uint64
	Signals [MaxSignals]uint64
}

type dataLayout struct {
	Header  dataHeader
	Values  dataValues
	Comps   [MaxComps]compEntry
	Pins    [MaxPins]pinEntry
	Params  [MaxParams]paramEntry
	Signals [MaxSignals]sigEntry
}

func packSigInfo(t Type, live bool, writers, readers, bidirs int) uint64 {
	l := uint64(0)
	if live {
		l = 1
	}
	return uint64(t) | l<<8 | uint64(uint16(writers))<<16 | uint64(uint16(readers))<<32 | uint64(uint16(bidirs))<<48
}

func unpackSigInfo(v uint64) (t Type, live bool, writers, readers, bidirs int) {
	return Type(v), v>>8&1 != 0, int(uint16(v >> 16)), int(uint16(v >> 32)), int(uint16(v >> 48))
}

func sizeofData() int { return int(unsafe.Sizeof(dataLayout{})) }

// dataStore is the memory the data tables live in: a shared-memory
// segment, or private memory. Functions touch it through pins; host code
// through access (loss).
type dataStore struct {
	loss // seg nil: private
	l    *dataLayout
	refs []word // newRef's chunk, its unused cells; guarded by h.mu
}

// refChunk is how many cells newRef allocates at once: 512 bytes.
const refChunk = 64

// newRef returns a new cell pointing at to: where a pin's or parameter's
// handle finds its word. Cells are handed out in creation order from
// chunks, so a component's cells share cache lines, and never reused: a
// removed pin's handles keep theirs (the GC frees a chunk none uses).
// Called with h.mu.
func (d *dataStore) newRef(to *uint64) *word {
	if len(d.refs) == 0 {
		d.refs = make([]word, refChunk)
	}
	r := &d.refs[0]
	d.refs = d.refs[1:]
	r.Store(to)
	return r
}

const dataLost = "hal data segment lost: another process truncated it; the threads go on, " +
	"with pins, parameters and signals in this process's memory only"

func newDataStore(o shm.Options, key uint32, log *zap.Logger) (*dataStore, error) {
	if key == 0 {
		mem := make([]uint64, (sizeofData()+7)/8)
		l := (*dataLayout)(unsafe.Pointer(&mem[0]))
		initDataHeader(l)
		return &dataStore{loss: loss{log: log, what: dataLost}, l: l}, nil
	}
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("data segment 0x%08x: shared memory needs Linux: %w", key, rtapi.ErrNotSupported)
	}
	seg, err := createReplacingStale(o, key, sizeofData())
	if err != nil {
		return nil, fmt.Errorf("data segment: %w", err)
	}
	l, err := shm.View[dataLayout](seg, 0)
	if err == nil {
		err = seg.Guard(func() { initDataHeader(l) })
	}
	if err != nil {
		_ = seg.Delete()
		return nil, fmt.Errorf("data segment: %w", err)
	}
	return &dataStore{loss: loss{seg: seg, log: log, what: dataLost}, l: l}, nil
}

func initDataHeader(l *dataLayout) {
	h := &l.Header
	h.Version = dataVersion
	h.NameLen = NameLen
	h.MaxComps, h.MaxPins, h.MaxParams, h.MaxSignals = MaxComps, MaxPins, MaxParams, MaxSignals
	h.HostPID = int64(os.Getpid())
	atomic.StoreUint64(&h.Magic, dataMagic)
}

// createReplacingStale creates a segment; one left by a host that died is
// replaced, a live host's is refused, an untrusted one is an error.
func createReplacingStale(o shm.Options, key uint32, size int) (*shm.Segment, error) {
	seg, err := shm.Create(o, key, size)
	if errors.Is(err, shm.ErrExist) {
		pid, alive, hostErr := segmentHost(o, key)
		if hostErr != nil {
			return nil, hostErr
		}
		if alive {
			return nil, fmt.Errorf("segment %s belongs to running process %d: %w (%w)",
				shm.Name(o.Instance, key), pid, rtapi.ErrInvalid, os.ErrExist)
		}
		if err := shm.Remove(o, key); err != nil && !errors.Is(err, shm.ErrNotExist) {
			return nil, fmt.Errorf("remove stale segment: %w", err)
		}
		seg, err = shm.Create(o, key, size)
	}
	if err != nil {
		return nil, fmt.Errorf("create segment %s: %w", shm.Name(o.Instance, key), err)
	}
	return seg, nil
}

func (d *dataStore) name() string {
	if d.seg == nil {
		return ""
	}
	return d.seg.Name()
}

// load loads the word at w, a pointer into the tables, under access.
func (d *dataStore) load(w *uint64) (v uint64) {
	d.access(func() { v = atomic.LoadUint64(w) })
	return v
}

// close marks the tables closed for readers and removes the segment,
// truncated or not; a truncation is its shm.ErrTruncated.
func (d *dataStore) close() error {
	d.access(func() { atomic.StoreInt64(&d.l.Header.Closed, 1) })
	if d.seg == nil {
		return nil
	}
	return errors.Join(d.err(), d.seg.Delete())
}
