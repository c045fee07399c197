//go:build linux

package hal

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/shm"
	"github.com/gortapi/gortapi/rtapi"
)

// Monitor reads a HAL's thread records from its stats segment, from
// another process (or the same one). It never takes a lock the threads
// could wait on. A Monitor is safe for use by one goroutine at a time.
type Monitor struct {
	seg    *shm.Segment
	layout *statsLayout
	rec    threadRecord
	closed bool
}

// OpenMonitor attaches to the stats segment of a running host. A missing
// segment matches os.ErrNotExist; one that is not a HAL stats segment of
// this layout matches rtapi.ErrInvalid.
func OpenMonitor(o MonitorOptions) (*Monitor, error) {
	if o.Key == 0 {
		return nil, errf("open monitor", "", "", rtapi.ErrInvalid, "a stats segment key is required")
	}
	seg, err := shm.Attach(shm.Options{Dir: o.Dir, Instance: o.Instance}, o.Key)
	if err != nil {
		return nil, &Error{Op: "open monitor", Err: err}
	}
	if uintptr(seg.Size()) != sizeofLayout() {
		seg.Close()
		return nil, errf("open monitor", "", "", rtapi.ErrInvalid,
			"segment %s is not a HAL stats segment of this build: it holds %d bytes, not %d",
			seg.Name(), seg.Size(), sizeofLayout())
	}
	layout, err := shm.View[statsLayout](seg, 0)
	if err != nil {
		seg.Close()
		return nil, &Error{Op: "open monitor", Err: err}
	}
	h := &layout.Header
	if atomic.LoadUint64(&h.Magic) != statsMagic || h.Version != statsVersion ||
		h.MaxThreads != MaxThreads || h.MaxFuncts != MaxFuncts || h.NameLen != NameLen {
		seg.Close()
		return nil, errf("open monitor", "", "", rtapi.ErrInvalid,
			"segment %s is not a HAL stats segment of layout %d", seg.Name(), statsVersion)
	}
	return &Monitor{seg: seg, layout: layout}, nil
}

// Read copies every thread's latest published record (consistent in
// itself: one seqlock read) and the current counters of the functions in
// its chain (live: they may be a few calls newer than the record). It
// allocates.
func (m *Monitor) Read() (Snapshot, error) {
	if m.closed {
		return Snapshot{}, &Error{Op: "monitor read", Err: rtapi.ErrClosed}
	}
	h := &m.layout.Header
	s := Snapshot{
		HostPID:    int(h.HostPID),
		HostClosed: atomic.LoadInt64(&h.Closed) != 0,
		BasePeriod: time.Duration(atomic.LoadInt64(&h.BasePeriod)),
	}
	n := atomic.LoadInt64(&h.NThreads) // checked as stored: int may have 32 bits
	if n < 0 || n > MaxThreads {
		return s, errf("monitor read", "", "", rtapi.ErrInvalid, "corrupt thread count %d", n)
	}
	for i := range int(n) {
		r := &m.rec
		m.layout.Threads[i].Read(r)
		exported := atomic.LoadInt64(&h.NExported) // after the record: covers its chain
		if r.NFuncts < 0 || r.NFuncts > MaxFuncts || exported < 0 || exported > MaxExported {
			return s, errf("monitor read", "", "", rtapi.ErrInvalid,
				"corrupt function count %d (exported %d) in slot %d", r.NFuncts, exported, i)
		}
		ts := ThreadStats{
			Name:      cstring(r.Name[:]),
			Period:    time.Duration(r.Period),
			Requested: time.Duration(r.Requested),
			Priority:  int(r.Priority),
			State:     stateName(r.State),
			Beat:      r.Beat,
			Time:      time.Duration(r.Time),
			TMax:      time.Duration(r.TMax),
			Overruns:  r.Overruns,
		}
		for _, idx := range r.Chain[:r.NFuncts] {
			if int64(idx) >= exported {
				return s, errf("monitor read", "", "", rtapi.ErrInvalid,
					"thread slot %d calls function %d of %d exported", i, idx, exported)
			}
			f := &m.layout.Functs[idx]
			ts.Functs = append(ts.Functs, FunctStats{
				Name:     cstring(f.Name[:]),
				Time:     time.Duration(atomic.LoadInt64(&f.Time)),
				TMax:     time.Duration(atomic.LoadInt64(&f.TMax)),
				Calls:    atomic.LoadInt64(&f.Calls),
				Overruns: atomic.LoadInt64(&f.Overruns),
			})
		}
		s.Threads = append(s.Threads, ts)
	}
	return s, nil
}

// HostAlive reports whether the process that created the segment still
// exists.
func (m *Monitor) HostAlive() bool {
	if m.closed {
		return false
	}
	return processAlive(m.seg.CreatorPID())
}

// Close detaches. If the host has already removed the segment, the last
// detach frees it. A second Close returns ErrClosed.
func (m *Monitor) Close() error {
	if m.closed {
		return &Error{Op: "monitor close", Err: rtapi.ErrClosed}
	}
	m.closed = true
	if err := m.seg.Close(); err != nil && !errors.Is(err, shm.ErrClosed) {
		return fmt.Errorf("hal: monitor close: %w", err)
	}
	return nil
}
