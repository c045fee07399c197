package hal

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gortapi/gortapi/internal/ipc"
	"github.com/gortapi/gortapi/internal/shm"
	"github.com/gortapi/gortapi/rtapi"
)

// The stats segment: a header, a table of every exported function's
// name and counters, and one seqlock per thread. The counters are the
// functions' own: the calling thread updates them in place with atomic
// stores after each call (LinuxCNC's .time and .tmax live in HAL shared
// memory the same way), so another process sees every call. Each thread
// publishes its own record — its timing and its chain as function indexes
// — through its seqlock, and is its only writer while it runs; the HAL
// writes it only while the thread does not run. A reader copies a record
// with Seqlock.Read and never makes the writer wait. A function's name is
// written before the exported count that makes it visible.

const (
	statsMagic   = 0x314c4148_74726f67 // "gortHAL1", little-endian
	statsVersion = 3
)

type statsHeader struct {
	Magic      uint64
	Version    uint32
	MaxThreads uint32
	MaxFuncts  uint32
	NameLen    uint32
	HostPID    int64
	BasePeriod int64 // atomic
	NThreads   int64 // atomic
	Closed     int64 // atomic: 1 once the host closed the HAL
	NExported  int64 // atomic: functions whose slot is filled
}

// functSlot is one exported function's name and counters. The counters
// are atomics with one writer, the thread calling the function.
type functSlot struct {
	Name     [NameLen]byte
	Time     int64
	TMax     int64
	Calls    int64
	Overruns int64
}

type threadRecord struct {
	Name      [NameLen]byte
	Period    int64
	Requested int64
	Priority  int64
	State     int64
	Beat      int64
	Time      int64
	TMax      int64
	Overruns  int64
	NFuncts   int64
	Chain     [MaxFuncts]uint16 // indexes into statsLayout.Functs
}

type statsLayout struct {
	Header  statsHeader
	Functs  [MaxExported]functSlot
	Threads [MaxThreads]ipc.Seqlock[threadRecord]
}

// publisher owns the stats segment of a HAL.
type publisher struct {
	seg    *shm.Segment
	layout *statsLayout
}

func newPublisher(dir string, instance int, key uint32) (*publisher, error) {
	o := shm.Options{Dir: dir, Instance: instance, Prefault: true}
	size := int(sizeofLayout())
	seg, err := shm.Create(o, key, size)
	if errors.Is(err, shm.ErrExist) {
		// A segment left by a host that died is replaced; a live host's
		// is not touched.
		if pid, alive := segmentHost(o, key); alive {
			return nil, fmt.Errorf("stats segment %s is published by running process %d: %w (%w)",
				shm.Name(instance, key), pid, rtapi.ErrInvalid, os.ErrExist)
		}
		if err := shm.Remove(o, key); err != nil && !errors.Is(err, shm.ErrNotExist) {
			return nil, fmt.Errorf("remove stale stats segment: %w", err)
		}
		seg, err = shm.Create(o, key, size)
	}
	if err != nil {
		return nil, fmt.Errorf("create stats segment %s: %w", shm.Name(instance, key), err)
	}
	layout, err := shm.View[statsLayout](seg, 0)
	if err != nil {
		_ = seg.Delete()
		return nil, err
	}
	layout.Header = statsHeader{
		Magic:      statsMagic,
		Version:    statsVersion,
		MaxThreads: MaxThreads,
		MaxFuncts:  MaxFuncts,
		NameLen:    NameLen,
		HostPID:    int64(os.Getpid()),
	}
	return &publisher{seg: seg, layout: layout}, nil
}

// segmentHost reports the pid that created an existing segment and
// whether that process is alive (this process included: another HAL here
// may be publishing on the key). An unreadable segment counts as dead.
func segmentHost(o shm.Options, key uint32) (int, bool) {
	o.AttachTimeout = -1
	seg, err := shm.Attach(o, key)
	if err != nil {
		return 0, false
	}
	defer seg.Close()
	pid := seg.CreatorPID()
	return pid, pid > 0 && processAlive(pid)
}

func sizeofLayout() uintptr { return unsafe.Sizeof(statsLayout{}) }

func (p *publisher) thread(slot int) *ipc.Seqlock[threadRecord] { return &p.layout.Threads[slot] }

// funct fills the function's slot and makes it visible. Called with h.mu.
func (p *publisher) funct(index int, name string) *functSlot {
	s := &p.layout.Functs[index]
	copy(s.Name[:], name)
	atomic.StoreInt64(&p.layout.Header.NExported, int64(index+1))
	return s
}

func (p *publisher) setThreads(n int, base time.Duration) {
	atomic.StoreInt64(&p.layout.Header.BasePeriod, int64(base))
	atomic.StoreInt64(&p.layout.Header.NThreads, int64(n))
}

func (p *publisher) close() error {
	atomic.StoreInt64(&p.layout.Header.Closed, 1)
	return p.seg.Delete()
}

// publish writes the thread's record: its timing and its chain. It runs
// on the thread (RT-safe: no allocation, no lock) or, while the thread does
// not run, from the HAL.
func (th *Thread) publish(c *chain, state int64) {
	r := &th.rec
	r.Name = th.nameBuf
	r.Period = th.periodNs
	r.Requested = int64(th.requested)
	r.Priority = th.prio.Load()
	r.State = state
	r.Beat = th.beat.Load()
	r.Time = th.time.Load()
	r.TMax = th.tmax.Load()
	r.Overruns = th.overruns.Load()
	r.NFuncts = int64(len(c.functs))
	for i, f := range c.functs {
		r.Chain[i] = uint16(f.index)
	}
	th.seq.Write(r)
}

// publishIdle sets the thread's state and, when publishing, writes its
// record. Only while the thread does not run; called with h.mu.
func (th *Thread) publishIdle(state int64) {
	th.state.Store(state)
	if th.seq != nil {
		th.publish(th.chain.Load(), state)
	}
}
