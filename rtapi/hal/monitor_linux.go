//go:build linux

package hal

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// Monitor reads a HAL's thread records from its stats segment, from
// another process (or the same one), never taking a lock the threads
// could wait on. It is for one goroutine at a time. The segment is
// untrusted input: a corrupt or hostile one gives ErrCorrupt, never a
// panic, an access outside it or an endless loop; one truncated under the
// monitor gives shm.ErrTruncated instead of SIGBUS.
type Monitor struct {
	seg    *shm.Segment
	layout *statsLayout
	rec    threadRecord
	closed bool
}

// maxReadTries bounds the seqlock copies Read makes of one thread record.
const maxReadTries = 1000

// tryReadRecord is Seqlock.TryRead, a variable for a deterministic test.
var tryReadRecord = (*ipc.Seqlock[threadRecord]).TryRead

// OpenMonitor attaches to the stats segment of a running host. Errors: a
// missing segment matches os.ErrNotExist; one owned or writable by an
// untrusted user (MonitorOptions.Group) shm.ErrUntrusted; one not of this
// layout rtapi.ErrInvalid (and ErrCorrupt if only its header is wrong).
func OpenMonitor(o MonitorOptions) (*Monitor, error) {
	if o.Key == 0 {
		return nil, errf("open monitor", "", "", rtapi.ErrInvalid, "a stats segment key is required")
	}
	seg, err := shm.Attach(shm.Options{Dir: o.Dir, Instance: o.Instance, Group: o.Group, AllowUIDs: o.AllowUIDs, ReadOnly: true}, o.Key)
	if errors.Is(err, shm.ErrInvalid) {
		err = fmt.Errorf("%w (%w)", err, rtapi.ErrInvalid)
	}
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
	var headerErr error
	if err := seg.Guard(func() { headerErr = checkHeader(&layout.Header, true) }); err != nil {
		seg.Close()
		return nil, &Error{Op: "open monitor", Err: err}
	}
	if headerErr != nil {
		seg.Close()
		return nil, &Error{Op: "open monitor", Err: fmt.Errorf("segment %s: %w", seg.Name(), headerErr)}
	}
	return &Monitor{seg: seg, layout: layout}, nil
}

// checkHeader checks the header against this build's layout. At attach a
// zero magic is a header not yet written; later it is corruption.
func checkHeader(h *statsHeader, attaching bool) error {
	magic := atomic.LoadUint64(&h.Magic)
	version := atomic.LoadUint32(&h.Version)
	threads := atomic.LoadUint32(&h.MaxThreads)
	functs := atomic.LoadUint32(&h.MaxFuncts)
	nameLen := atomic.LoadUint32(&h.NameLen)
	if magic == 0 && attaching {
		return notWritten("stats")
	}
	if magic != statsMagic || version != statsVersion || threads != MaxThreads || functs != MaxFuncts || nameLen != NameLen {
		return corrupt("not a HAL stats segment of layout %d (magic %#x, version %d, limits %d/%d/%d)",
			statsVersion, magic, version, threads, functs, nameLen)
	}
	return nil
}

// Read copies every thread's latest record (one seqlock read) and the
// live counters of the functions in its chain, which may be a few calls
// newer. It allocates. On ErrCorrupt (and rtapi.ErrInvalid) or
// shm.ErrTruncated it returns an empty Snapshot.
func (m *Monitor) Read() (Snapshot, error) {
	if m.closed {
		return Snapshot{}, &Error{Op: "monitor read", Err: rtapi.ErrClosed}
	}
	var s Snapshot
	var err error
	if gerr := m.seg.Guard(func() { s, err = m.read() }); gerr != nil {
		return Snapshot{}, &Error{Op: "monitor read", Err: gerr}
	}
	if err != nil {
		// Nonsense values may be the zeros past a truncated file's end: say so.
		if terr := m.seg.Check(); errors.Is(terr, shm.ErrTruncated) {
			err = terr
		}
		return Snapshot{}, &Error{Op: "monitor read", Err: err}
	}
	return s, nil
}

// read does Read's work; each shared value is loaded once and checked.
func (m *Monitor) read() (Snapshot, error) {
	h := &m.layout.Header
	if err := checkHeader(h, false); err != nil {
		return Snapshot{}, err
	}
	s := Snapshot{
		HostPID:    int(atomic.LoadInt64(&h.HostPID)),
		HostClosed: atomic.LoadInt64(&h.Closed) != 0,
		BasePeriod: time.Duration(atomic.LoadInt64(&h.BasePeriod)),
	}
	n := atomic.LoadInt64(&h.NThreads) // checked as stored: int may have 32 bits
	if n < 0 || n > MaxThreads {
		return Snapshot{}, corrupt("thread count %d outside 0..%d", n, MaxThreads)
	}
	for i := range int(n) {
		r := &m.rec
		if !m.readRecord(i, r) {
			return Snapshot{}, corrupt("thread slot %d changed during each of %d reads", i, maxReadTries)
		}
		exported := atomic.LoadInt64(&h.NExported) // after the record: covers its chain
		nf := r.NFuncts
		if nf < 0 || nf > MaxFuncts || exported < 0 || exported > MaxExported {
			return Snapshot{}, corrupt("function count %d (exported %d) in thread slot %d", nf, exported, i)
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
		for _, idx := range r.Chain[:nf] {
			if int64(idx) >= exported {
				return Snapshot{}, corrupt("thread slot %d calls function %d of %d exported", i, idx, exported)
			}
			f := &m.layout.Functs[idx]
			name := f.Name // one copy; a name changing under it is wrong data, not a fault
			ts.Functs = append(ts.Functs, FunctStats{
				Name:     cstring(name[:]),
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

// readRecord copies thread slot i into r, in at most maxReadTries tries.
func (m *Monitor) readRecord(i int, r *threadRecord) bool {
	for range maxReadTries {
		if _, ok := tryReadRecord(&m.layout.Threads[i], r); ok {
			return true
		}
	}
	return false
}

// HostAlive reports whether the segment's creator process still exists.
func (m *Monitor) HostAlive() bool {
	if m.closed {
		return false
	}
	return sys.ProcessAlive(m.seg.CreatorPID())
}

// HostPID is the creator's pid, as the header said at open.
func (m *Monitor) HostPID() int { return m.seg.CreatorPID() }

// HostGone reports whether the host is gone: it closed its HAL, its
// process died, the segment's name was unlinked, or the segment was
// truncated under the monitor. A monitor then closes and opens again to
// follow a restarted host. It makes a few system calls.
func (m *Monitor) HostGone() bool {
	if m.closed {
		return true
	}
	return hostGone(m.seg, func() int64 { return atomic.LoadInt64(&m.layout.Header.Closed) })
}

// Close detaches. A second Close returns ErrClosed.
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
