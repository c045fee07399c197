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
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
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
	Frames ipc.Seqlock[Frame]
}

// Table is a process's attachment of the pin segment.
type Table struct {
	seg   *shm.Segment
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
	if stale(err) {
		// A stale segment of another build, or one a host left empty or
		// half-made when it died: clear it (as hal does its stats
		// segment). One owned by a user not trusted is not stale: its
		// error says what to do.
		if err := rt.ShmRemove(key); err != nil {
			return nil, err
		}
		seg, err = rt.ShmNew(key, size)
	}
	if err != nil {
		return nil, fmt.Errorf("pins: %w", err)
	}
	b, err := shm.View[block](seg, 0)
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

// stale reports an error of a segment that cannot be a running host's.
func stale(err error) bool {
	for _, e := range []error{shm.ErrSizeMismatch, shm.ErrCorrupt, shm.ErrNotInitialised,
		shm.ErrTruncated, shm.ErrVersion} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
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
	b, err := shm.View[block](seg, 0)
	if err != nil {
		seg.Close()
		return nil, err
	}
	// The segment is another process's: N is loaded once and checked
	// before it bounds anything; names are copied once.
	t := &Table{seg: seg, b: b}
	var bad error
	gerr := seg.Guard(func() {
		n := atomic.LoadInt64(&b.N)
		if atomic.LoadUint64(&b.Magic) != magic || n < 0 || n > MaxPins {
			bad = fmt.Errorf("pins: segment %s is not an initialised pin table (pin count %d): %w", seg.Name(), n, rtapi.ErrInvalid)
			return
		}
		for i := range n {
			name := b.Names[i]
			s := name[:]
			if j := bytes.IndexByte(s, 0); j >= 0 {
				s = s[:j]
			}
			t.names = append(t.names, string(s))
		}
	})
	if err := errors.Join(gerr, bad); err != nil {
		seg.Close()
		return nil, err
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
// seqlock. Only one function may call it (the scope). RT-safe. The pin
// count is this process's own (the names it created or attached), never
// the count in the segment, which another process may have changed.
func (t *Table) Publish(now, cycle int64) {
	f := &t.frame
	f.Time, f.Cycle = now, cycle
	for i := range len(t.names) {
		f.Values[i] = t.b.Pins[i].Get()
	}
	t.b.Frames.Write(f)
}

// maxReadTries bounds Read's seqlock copies: the scope publishes once per
// servo cycle, a copy takes well under a microsecond.
const maxReadTries = 1000

// tryReadFrame is Seqlock.TryRead, called through a variable only so that
// a test can make every copy lose its race with a writer, deterministically
// (a racing goroutine does so only while it really runs in parallel).
var tryReadFrame = (*ipc.Seqlock[Frame]).TryRead

// Read copies the latest frame into f and returns its sequence number
// (0 before the first Publish). It gives up with rtapi.ErrTimeout when a Write completes during each of its copies (no
// scope publishes that fast), and returns shm.ErrTruncated when the
// segment was truncated under it; f is then unchanged or torn and must not
// be used. Not for real-time tasks (it runs under Segment.Guard).
func (t *Table) Read(f *Frame) (uint64, error) {
	var seq uint64
	var ok bool
	err := t.seg.Guard(func() {
		for range maxReadTries {
			if seq, ok = tryReadFrame(&t.b.Frames, f); ok {
				return
			}
		}
	})
	switch {
	case err != nil:
		return 0, fmt.Errorf("pins: read %s: %w", t.seg.Name(), err)
	case !ok:
		return 0, fmt.Errorf("pins: read %s: the frame changed during each of %d copies: %w", t.seg.Name(), maxReadTries, rtapi.ErrTimeout)
	}
	return seq, nil
}

// HostPID is the pid of the process that created the table.
func (t *Table) HostPID() int { return t.seg.CreatorPID() }

// Name is the segment's POSIX name.
func (t *Table) Name() string { return t.seg.Name() }

// Close detaches (a monitor's way out).
func (t *Table) Close() error { return t.seg.Close() }

// Delete detaches and removes the segment's name; monitors still attached
// keep their memory until they detach (the host's way out).
func (t *Table) Delete() error { return t.seg.Delete() }

func sizeofBlock() int { return int(unsafe.Sizeof(block{})) }

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
