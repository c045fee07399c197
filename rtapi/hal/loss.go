package hal

import (
	"errors"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/rtapi/shm"
)

// loss contains the truncation of a segment the HAL writes, the stats or
// the data segment. Another process that may write the file may also
// shrink it, and an access past its new end faults. A HAL thread turns
// the fault into a panic, recovers it and calls lost; code outside a
// cycle touches the segment through access. Either way the segment is
// orphaned (shm.Segment.Orphan: the same addresses become private memory
// holding what the file still held), so that no access faults again, and
// the loss is logged once; err reports it after.
type loss struct {
	seg  *shm.Segment // nil: private memory, nothing to lose
	log  *zap.Logger
	what string // the log message

	once sync.Once
	errp atomic.Pointer[error] // set by orphan
}

// lost reports whether v, a panic a thread recovered, is a fault in the
// segment, and orphans the segment if so. Runs on the faulting thread, on
// the fault's path only: it allocates and makes system calls, once.
func (l *loss) lost(v any) bool {
	if l.seg == nil {
		return false
	}
	te := l.seg.Fault(v)
	if te == nil {
		return false
	}
	l.orphan(te)
	return true
}

// access runs f, which reads or writes the segment outside a thread's
// cycle. If f faults because the segment was truncated, the segment is
// orphaned and f runs again, on the private memory: f must be idempotent
// up to the access that faulted, as single loads and stores are. Taking
// the address of a field in the segment touches it (Go's nil check), so
// f computes such addresses itself. After the segment's Close f does not
// run.
func (l *loss) access(f func()) {
	if l.seg == nil {
		f()
		return
	}
	var te *shm.TruncatedError
	if err := l.seg.Guard(f); errors.As(err, &te) {
		l.orphan(te)
		_ = l.seg.Guard(f)
	}
}

// orphan handles the first truncation found (te).
func (l *loss) orphan(te *shm.TruncatedError) {
	l.once.Do(func() {
		err := error(te)
		if oerr := l.seg.Orphan(); oerr != nil {
			err = errors.Join(te, oerr)
		}
		l.errp.Store(&err)
		l.log.Error(l.what, zap.String("segment", l.seg.Name()), zap.Error(err))
	})
}

// err reports why the segment is no longer shared, nil while it is.
func (l *loss) err() error {
	if e := l.errp.Load(); e != nil {
		return *e
	}
	return nil
}
