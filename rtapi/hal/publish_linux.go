//go:build linux

package hal

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// statsSeqlock is a thread's slot in the stats segment.
type statsSeqlock = ipc.Seqlock[threadRecord]

type statsLayout struct {
	Header  statsHeader
	Functs  [MaxExported]functSlot
	Threads [MaxThreads]ipc.Seqlock[threadRecord]
}

// publisher owns the stats segment of a HAL.
type publisher struct {
	seg    *shm.Segment
	layout *statsLayout
	loss   loss // its truncation by another process
}

func newPublisher(o shm.Options, key uint32) (*publisher, error) {
	seg, err := createReplacingStale(o, key, int(sizeofLayout()))
	if err != nil {
		return nil, fmt.Errorf("stats segment: %w", err)
	}
	layout, err := shm.View[statsLayout](seg, 0)
	if err != nil {
		_ = seg.Delete()
		return nil, err
	}
	// The magic last: a reader that sees it sees the rest.
	layout.Header = statsHeader{
		Version:    statsVersion,
		MaxThreads: MaxThreads,
		MaxFuncts:  MaxFuncts,
		NameLen:    NameLen,
		HostPID:    int64(os.Getpid()),
	}
	atomic.StoreUint64(&layout.Header.Magic, statsMagic)
	return &publisher{seg: seg, layout: layout, loss: loss{seg: seg,
		what: "hal stats segment lost: another process truncated it; the threads go on, no longer publishing"}}, nil
}

// segmentHost reports the pid that created an existing segment and
// whether it is alive (this process counts: another HAL here may use the
// key). An unreadable segment counts as dead; an untrusted one is an error.
func segmentHost(o shm.Options, key uint32) (int, bool, error) {
	// Long enough for a live creator to finish initialising, short enough
	// not to hold up the start over a dead one's half-made segment.
	o.AttachTimeout = 100 * time.Millisecond
	seg, err := shm.Attach(o, key)
	if errors.Is(err, shm.ErrUntrusted) || errors.Is(err, shm.ErrInvalid) {
		return 0, false, err
	}
	if err != nil {
		return 0, false, nil
	}
	defer seg.Close()
	pid := seg.CreatorPID()
	return pid, pid > 0 && sys.ProcessAlive(pid), nil
}

func sizeofLayout() uintptr { return unsafe.Sizeof(statsLayout{}) }

// thread returns the slot's seqlock. Taking the address touches the
// mapping (Go's nil check), so it is guarded; in a truncated segment the
// thread's first publish faults.
func (p *publisher) thread(slot int) *statsSeqlock {
	var sl *statsSeqlock
	if p.guard(func() { sl = &p.layout.Threads[slot] }) != nil {
		sl = (*statsSeqlock)(unsafe.Add(unsafe.Pointer(p.layout), unsafe.Offsetof(p.layout.Threads)+uintptr(slot)*unsafe.Sizeof(p.layout.Threads[0])))
	}
	return sl
}

// funct fills the function's slot and makes it visible. Called with h.mu.
func (p *publisher) funct(index int, name string) *functSlot {
	s := &p.layout.Functs[index]
	_ = p.guard(func() {
		*s = functSlot{}
		copy(s.Name[:], name)
		if atomic.LoadInt64(&p.layout.Header.NExported) <= int64(index) {
			atomic.StoreInt64(&p.layout.Header.NExported, int64(index+1))
		}
	})
	return s
}

// clearFunct clears the slot of a function deleted (unloadrt, a refused
// loadrt), on no thread by then. Called with h.mu.
func (p *publisher) clearFunct(index int) {
	_ = p.guard(func() { p.layout.Functs[index] = functSlot{} })
}

func (p *publisher) setThreads(n int, base time.Duration) {
	_ = p.guard(func() {
		atomic.StoreInt64(&p.layout.Header.BasePeriod, int64(base))
		atomic.StoreInt64(&p.layout.Header.NThreads, int64(n))
	})
}

// guard runs f outside a cycle; a truncation is shm.ErrTruncated, not SIGBUS.
func (p *publisher) guard(f func()) error { return p.seg.Guard(f) }

// lost is loss.lost; a nil p has nothing to lose.
func (p *publisher) lost(v any) bool { return p != nil && p.loss.lost(v) }

// access runs f, which reads or writes the segment outside a thread's
// cycle (counters read by Stats, ResetMax), as loss.access does. A nil p
// (no stats segment: the counters are private) just runs f.
func (p *publisher) access(f func()) {
	if p == nil {
		f()
		return
	}
	p.loss.access(f)
}

// err reports why the segment stopped publishing, nil while it publishes.
func (p *publisher) err() error { return p.loss.err() }

// close marks the segment closed for monitors and removes it, truncated
// or not; a truncation is its shm.ErrTruncated.
func (p *publisher) close() error {
	err := p.err()
	if err == nil {
		err = p.guard(func() { atomic.StoreInt64(&p.layout.Header.Closed, 1) })
	}
	return errors.Join(err, p.seg.Delete())
}
