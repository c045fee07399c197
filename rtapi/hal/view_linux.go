//go:build linux

package hal

import (
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/rtapi/ipc"
)

// maxReadTries bounds the seqlock copies Read makes of one thread record.
const maxReadTries = 1000

// tryReadRecord is Seqlock.TryRead, a variable for a deterministic test.
var tryReadRecord = (*ipc.Seqlock[threadRecord]).TryRead

// checkStatsHeader checks the header against this build's layout. At
// attach a zero magic is a header not yet written; later it is corruption.
func checkStatsHeader(h *statsHeader, attaching bool) error {
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

func (v *View) statsClosed() int64 { return atomic.LoadInt64(&v.sl.Header.Closed) }

// readThreads copies every thread's latest record (one seqlock read) and
// the live counters of the functions in its chain, which may be a few
// calls newer, into s; each shared value is loaded once and checked.
func (v *View) readThreads(s *Snapshot) error {
	h := &v.sl.Header
	if err := checkStatsHeader(h, false); err != nil {
		return err
	}
	s.HostPID = int(atomic.LoadInt64(&h.HostPID))
	s.HostClosed = atomic.LoadInt64(&h.Closed) != 0
	s.BasePeriod = time.Duration(atomic.LoadInt64(&h.BasePeriod))
	n := atomic.LoadInt64(&h.NThreads) // checked as stored: int may have 32 bits
	if n < 0 || n > MaxThreads {
		return corrupt("thread count %d outside 0..%d", n, MaxThreads)
	}
	for i := range int(n) {
		r := &v.rec
		if !v.readRecord(i, r) {
			return corrupt("thread slot %d changed during each of %d reads", i, maxReadTries)
		}
		exported := atomic.LoadInt64(&h.NExported) // after the record: covers its chain
		nf := r.NFuncts
		if nf < 0 || nf > MaxFuncts || exported < 0 || exported > MaxExported {
			return corrupt("function count %d (exported %d) in thread slot %d", nf, exported, i)
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
				return corrupt("thread slot %d calls function %d of %d exported", i, idx, exported)
			}
			f := &v.sl.Functs[idx]
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
	return nil
}

// readRecord copies thread slot i into r, in at most maxReadTries tries.
func (v *View) readRecord(i int, r *threadRecord) bool {
	for range maxReadTries {
		if _, ok := tryReadRecord(&v.sl.Threads[i], r); ok {
			return true
		}
	}
	return false
}
