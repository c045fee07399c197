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

// The stats segment: a header, then one seqlock per thread slot. Each
// thread is the only writer of its slot while it runs; the HAL writes it
// only while the thread does not run. Readers in any process copy a slot
// with Seqlock.Read and never make the writer wait.

const (
	statsMagic   = 0x314c4148_74726f67 // "gortHAL1", little-endian
	statsVersion = 1
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
	_          [8]byte
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
	Functs    [MaxFuncts]functRecord
}

type functRecord struct {
	Name     [NameLen]byte
	Time     int64
	TMax     int64
	Calls    int64
	Overruns int64
}

type statsLayout struct {
	Header  statsHeader
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

func (p *publisher) setThreads(n int, base time.Duration) {
	atomic.StoreInt64(&p.layout.Header.BasePeriod, int64(base))
	atomic.StoreInt64(&p.layout.Header.NThreads, int64(n))
}

func (p *publisher) close() error {
	atomic.StoreInt64(&p.layout.Header.Closed, 1)
	return p.seg.Delete()
}

// publish writes the thread's record. It runs on the thread (RT-safe: no
// allocation, no lock) or, while the thread does not run, from the HAL.
func (th *Thread) publish(c *chain, state int64) {
	r := &th.rec
	r.Name = th.nameBuf
	r.Period = th.periodNs
	r.Requested = int64(th.requested)
	r.Priority = int64(th.prio)
	r.State = state
	r.Beat = th.beat.Load()
	r.Time = th.time.Load()
	r.TMax = th.tmax.Load()
	r.Overruns = th.overruns.Load()
	r.NFuncts = int64(len(c.functs))
	for i, f := range c.functs {
		fr := &r.Functs[i]
		fr.Name = f.nameBuf
		fr.Time = f.time.Load()
		fr.TMax = f.tmax.Load()
		fr.Calls = f.calls.Load()
		fr.Overruns = f.overruns.Load()
	}
	clear(r.Functs[len(c.functs):])
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
