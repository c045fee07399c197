package hal

import (
	"runtime"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// NewSegment creates a shared-memory segment of size bytes for the
// component, named "/gortapi-<instance>-<key as 8 hex digits>" like the
// HAL's own: in Options.ShmDir, shared with Options.ShmGroup, prefaulted.
// A segment left behind by a host that died is replaced; one whose host
// still runs is refused (ErrInvalid). Close deletes it after the threads
// have stopped, so a function may use it until then. It is how a
// component offers data to other processes (the sampler's ring).
// ErrNotSupported off Linux. It is set-up code.
func (c *Component) NewSegment(key uint32, size int) (*shm.Segment, error) {
	const op = "new segment"
	h := c.h
	if runtime.GOOS != "linux" {
		return nil, errf(op, "", "", rtapi.ErrNotSupported, "component %s: shared memory needs Linux", c.name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkOpen(op, "", ""); err != nil {
		return nil, err
	}
	o := shm.Options{Dir: h.opts.ShmDir, Instance: h.rt.Instance(), Prefault: true, Group: h.opts.ShmGroup}
	seg, err := createReplacingStale(o, key, size)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	h.segs = append(h.segs, seg)
	return seg, nil
}
