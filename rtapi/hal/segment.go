package hal

import (
	"runtime"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// NewSegment creates a prefaulted shared-memory segment of size bytes for
// the component to offer data to other processes (the sampler's ring),
// named and shared like the HAL's own (Options.StatsKey's rules). A live
// host's segment is ErrInvalid. HAL.Close deletes it after the threads
// stop. ErrNotSupported off Linux. Set-up code.
func (c *Component) NewSegment(key uint32, size int) (*shm.Segment, error) {
	const op = "new segment"
	h := c.h
	if runtime.GOOS != "linux" {
		return nil, errf(op, "", "", rtapi.ErrNotSupported, "component %s: shared memory needs Linux", c.name)
	}
	if err := h.lockOpen(op); err != nil {
		return nil, err
	}
	defer h.mu.Unlock()
	o := shm.Options{Dir: h.opts.ShmDir, Instance: h.rt.Instance(), Prefault: true, Group: h.opts.ShmGroup}
	seg, err := createReplacingStale(o, key, size)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	h.segs = append(h.segs, seg)
	return seg, nil
}
