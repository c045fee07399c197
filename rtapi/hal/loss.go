package hal

import (
	"errors"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/rtapi/shm"
)

// loss contains the truncation of the stats or data segment by another
// process: a thread recovers the fault and calls lost, code outside a
// cycle uses access. The segment is then orphaned (shm.Segment.Orphan),
// so no access faults again, and the loss is logged once and kept for err
// (docs/SECURITY.md, "Truncation").
type loss struct {
	seg  *shm.Segment // nil: private memory, nothing to lose
	log  *zap.Logger
	what string // the log message

	once sync.Once
	errp atomic.Pointer[error] // set by orphan
}

// lost reports whether v, a panic a thread recovered, is a fault in the
// segment, and orphans it if so. It allocates and makes system calls,
// only on the fault's path.
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

// access runs f, which touches the segment outside a thread's cycle. If
// f faults on a truncation, the segment is orphaned and f runs again, so
// f must be idempotent up to the faulting access. Taking a field's
// address touches the segment (Go's nil check): f computes addresses
// itself. After the segment's Close f does not run.
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
