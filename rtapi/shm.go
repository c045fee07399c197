package rtapi

import (
	"errors"
	"fmt"
	"syscall"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/rtapi/shm"
)

// Shared memory (rtapi_shmem_new, rtapi_shmem_getptr, rtapi_shmem_delete):
// package rtapi/shm's segments, opened with this RT's options.

// shmOptions maps this instance onto segment options; lock locks them in RAM.
func (rt *RT) shmOptions(lock bool) shm.Options {
	return shm.Options{
		Instance:  rt.opts.Instance,
		Lock:      lock,
		Prefault:  rt.info.RealTime,
		Group:     rt.opts.ShmGroup,
		AllowUIDs: rt.opts.ShmAllowUIDs,
	}
}

// ShmNew creates the segment key with size data bytes, or attaches to it
// when it exists with that size (rtapi_shmem_new); Segment.Created tells
// which. A created segment is mode 0600, or 0660 of Options.ShmGroup.
// Errors: another size, *shm.SizeMismatchError (shm.ErrSizeMismatch,
// ErrInvalid); a damaged
// segment, shm.ErrTruncated, shm.ErrCorrupt or *shm.VersionError; one
// owned or writable by a user this process does not trust,
// *shm.OwnerError (shm.ErrUntrusted, os.ErrPermission). On a real-time
// flavor the memory is prefaulted and locked; if locking is refused and
// Options.LockMemory is not On, it stays unlocked with a warning.
func (rt *RT) ShmNew(key uint32, size int) (*shm.Segment, error) {
	return rt.shmOpen("ShmNew", key, func(o shm.Options) (*shm.Segment, error) { return shm.New(o, key, size) })
}

// ShmCreate is ShmNew that only creates: an existing segment is a
// *shm.ExistError (shm.ErrExist, ErrExist) naming the process that created it, so a
// host that must be its segments' only writer refuses to start twice.
func (rt *RT) ShmCreate(key uint32, size int) (*shm.Segment, error) {
	return rt.shmOpen("ShmCreate", key, func(o shm.Options) (*shm.Segment, error) { return shm.Create(o, key, size) })
}

// ShmAttach attaches to an existing segment of any size; shm.ErrNotExist
// (and os.ErrNotExist) when there is none, shm.ErrUntrusted as for ShmNew.
func (rt *RT) ShmAttach(key uint32) (*shm.Segment, error) {
	return rt.shmOpen("ShmAttach", key, func(o shm.Options) (*shm.Segment, error) { return shm.Attach(o, key) })
}

// ShmExists reports whether a segment file exists for key.
func (rt *RT) ShmExists(key uint32) (bool, error) {
	return shm.Exists(rt.shmOptions(false), key)
}

// ShmRemove unlinks the segment's name at once, to clear one left behind
// by a crashed process; attached users keep their memory.
func (rt *RT) ShmRemove(key uint32) error {
	return shmErr("ShmRemove", key, shm.Remove(rt.shmOptions(false), key))
}

func (rt *RT) shmOpen(op string, key uint32, open func(shm.Options) (*shm.Segment, error)) (*shm.Segment, error) {
	if rt.isClosed() {
		return nil, fmt.Errorf("rtapi.%s(0x%08x): %w", op, key, ErrClosed)
	}
	lock := rt.info.RealTime && rt.opts.LockMemory != Off
	s, err := open(rt.shmOptions(lock))
	if err != nil && lock && rt.opts.LockMemory != On && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOMEM)) {
		rt.logger.Warn("shared memory not locked in RAM; page faults may delay tasks",
			zap.String("key", fmt.Sprintf("0x%08x", key)), zap.Error(err))
		s, err = open(rt.shmOptions(false))
	}
	if err != nil {
		return nil, shmErr(op, key, err)
	}
	return s, nil
}

// shmErr names the call and the key in a shm error.
func shmErr(op string, key uint32, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("rtapi.%s(0x%08x): %w", op, key, err)
}
