package pins

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/gortapi/gortapi/rtapi"
)

// Segment keys halhost uses unless told otherwise: "HALP" for the pins,
// "HALS" for the HAL's thread statistics.
const (
	DefaultPinsKey  = 0x48414c50
	DefaultStatsKey = 0x48414c53
)

// Limits of the table.
const (
	MaxPins = 32
	NameLen = 32
)

const magic = 0x314e4950_74726f67 // "gortPIN1"

// Pin is one float64 value in shared memory. Its one writer calls Set;
// anyone may Get. RT-safe.
type Pin struct{ bits uint64 }

// Get reads the pin. RT-safe.
func (p *Pin) Get() float64 { return math.Float64frombits(atomic.LoadUint64(&p.bits)) }

// Set writes the pin. RT-safe.
func (p *Pin) Set(v float64) { atomic.StoreUint64(&p.bits, math.Float64bits(v)) }

// Frame is every pin's value at one moment, as the scope publishes it.
type Frame struct {
	Time   int64 // the servo cycle's time, ns on the flavor's clock
	Cycle  int64 // servo cycles since start
	Values [MaxPins]float64
}

type block struct {
	Magic  uint64 // stored last by the creator
	N      int64
	Names  [MaxPins][NameLen]byte
	Pins   [MaxPins]Pin
	Frames rtapi.Seqlock[Frame]
}

// Table is a process's attachment of the pin segment.
type Table struct {
	seg   *rtapi.Segment
	b     *block
	names []string
	frame Frame // the publisher's scratch
}

// Create makes the pin segment with the given pin names. A segment left
// by a host that died is replaced; a live host's is refused.
func Create(rt *rtapi.RT, key uint32, names []string) (*Table, error) {
	if len(names) > MaxPins {
		return nil, fmt.Errorf("pins: %d pins, at most %d: %w", len(names), MaxPins, rtapi.ErrInvalid)
	}
	size := sizeofBlock()
	seg, err := rt.ShmNew(key, size)
	if err == nil && !seg.Created() {
		pid := seg.CreatorPID()
		if alive(pid) {
			seg.Close()
			return nil, fmt.Errorf("pins: segment %s belongs to running process %d (another halhost?): %w",
				seg.Name(), pid, rtapi.ErrInvalid)
		}
		seg.Close()
		if err := rt.ShmRemove(key); err != nil {
			return nil, err
		}
		seg, err = rt.ShmNew(key, size)
	}
	if errors.Is(err, rtapi.ErrShmSizeMismatch) || errors.Is(err, rtapi.ErrShmCorrupt) {
		// A stale segment of another build: clear it.
		if err := rt.ShmRemove(key); err != nil {
			return nil, err
		}
		seg, err = rt.ShmNew(key, size)
	}
	if err != nil {
		return nil, fmt.Errorf("pins: %w", err)
	}
	b, err := rtapi.View[block](seg, 0)
	if err != nil {
		seg.Delete()
		return nil, err
	}
	t := &Table{seg: seg, b: b}
	for i, n := range names {
		if n == "" || len(n) >= NameLen {
			seg.Delete()
			return nil, fmt.Errorf("pins: pin name %q: empty or longer than %d bytes: %w", n, NameLen-1, rtapi.ErrInvalid)
		}
		if t.index(n) >= 0 {
			seg.Delete()
			return nil, fmt.Errorf("pins: duplicate pin %q: %w", n, rtapi.ErrInvalid)
		}
		copy(b.Names[i][:], n)
		t.names = append(t.names, n)
	}
	b.N = int64(len(names))
	atomic.StoreUint64(&b.Magic, magic)
	return t, nil
}

// Attach attaches to a running host's pin segment.
func Attach(rt *rtapi.RT, key uint32) (*Table, error) {
	seg, err := rt.ShmAttach(key)
	if err != nil {
		return nil, err
	}
	if seg.Size() != sizeofBlock() {
		seg.Close()
		return nil, fmt.Errorf("pins: segment %s holds %d bytes, not a pin table of this build: %w",
			seg.Name(), seg.Size(), rtapi.ErrInvalid)
	}
	b, err := rtapi.View[block](seg, 0)
	if err != nil {
		seg.Close()
		return nil, err
	}
	if atomic.LoadUint64(&b.Magic) != magic || b.N < 0 || b.N > MaxPins {
		seg.Close()
		return nil, fmt.Errorf("pins: segment %s is not an initialised pin table: %w", seg.Name(), rtapi.ErrInvalid)
	}
	t := &Table{seg: seg, b: b}
	for i := range b.N {
		n := b.Names[i][:]
		if j := bytes.IndexByte(n, 0); j >= 0 {
			n = n[:j]
		}
		t.names = append(t.names, string(n))
	}
	return t, nil
}

func (t *Table) index(name string) int {
	for i, n := range t.names {
		if n == name {
			return i
		}
	}
	return -1
}

// Names lists the pins in table order.
func (t *Table) Names() []string { return t.names }

// Pin returns the named pin; components take their pins at set-up.
func (t *Table) Pin(name string) (*Pin, error) {
	i := t.index(name)
	if i < 0 {
		return nil, fmt.Errorf("pins: no pin %q: %w", name, rtapi.ErrInvalid)
	}
	return &t.b.Pins[i], nil
}

// Publish copies every pin into a frame and publishes it through the
// seqlock. Only one function may call it (the scope). RT-safe.
func (t *Table) Publish(now, cycle int64) {
	f := &t.frame
	f.Time, f.Cycle = now, cycle
	for i := range t.b.N {
		f.Values[i] = t.b.Pins[i].Get()
	}
	t.b.Frames.Write(f)
}

// Read copies the latest frame into f and returns its sequence number
// (0 before the first Publish).
func (t *Table) Read(f *Frame) uint64 { return t.b.Frames.Read(f) }

// HostPID is the pid of the process that created the table.
func (t *Table) HostPID() int { return t.seg.CreatorPID() }

// Name is the segment's POSIX name.
func (t *Table) Name() string { return t.seg.Name() }

// Close detaches (a monitor's way out).
func (t *Table) Close() error { return t.seg.Close() }

// Delete detaches and removes the segment once the last user detached
// (the host's way out).
func (t *Table) Delete() error { return t.seg.Delete() }

func sizeofBlock() int { return int(unsafe.Sizeof(block{})) }

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
