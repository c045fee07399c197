package rtapi

import (
	"errors"
	"fmt"
	"syscall"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/shm"
)

// Shared-memory errors. Each matches with errors.Is; ErrShmSizeMismatch
// and bad arguments match ErrInvalid too, a missing segment matches
// os.ErrNotExist, use after Close matches ErrClosed.
var (
	ErrShmExists         = shm.ErrExist          // Create-only found the key in use
	ErrShmNotExist       = shm.ErrNotExist       // ShmAttach: no segment with that key
	ErrShmSizeMismatch   = shm.ErrSizeMismatch   // ShmNew: the key exists with another size (*ShmSizeMismatchError)
	ErrShmNotInitialised = shm.ErrNotInitialised // the creator never finished initialising
	ErrShmTruncated      = shm.ErrTruncated      // the segment file is shorter than its header says
	ErrShmCorrupt        = shm.ErrCorrupt        // the segment file is not a gortapi segment
	ErrShmVersion        = shm.ErrVersion        // another header layout version (*ShmVersionError)
	// ErrShmUntrusted: the segment file is owned, or writable, by a user
	// this process does not trust (*ShmOwnerError); it matches
	// os.ErrPermission too. See Options.ShmGroup and docs/SECURITY.md.
	ErrShmUntrusted = shm.ErrUntrusted
)

// ShmOwnerError names the owner, group and mode of a refused segment file,
// why it was refused and what to do.
type ShmOwnerError = shm.OwnerError

// ShmTruncatedError reports a segment file truncated under its mapping
// (ErrShmTruncated).
type ShmTruncatedError = shm.TruncatedError

// ShmSizeMismatchError names both sizes of a key collision.
type ShmSizeMismatchError = shm.SizeMismatchError

// ShmVersionError names the layout version found.
type ShmVersionError = shm.VersionError

// ShmFieldError names the field that keeps a type out of shared memory.
type ShmFieldError = shm.FieldError

// Segment is one attachment of a named shared-memory segment
// (/dev/shm/gortapi-<instance>-<key>), shared by every process and
// component that attaches the same key under the same Options.Instance.
// Its methods are safe for concurrent use. Bytes and views are RT-safe
// memory; everything else is set-up code.
type Segment struct {
	seg *shm.Segment
}

// shmOptions maps this instance onto segment options: locked in RAM and
// prefaulted on real-time flavors (Options.LockMemory Off disables the
// lock).
func (rt *RT) shmOptions(lock bool) shm.Options {
	return shm.Options{
		Instance:  rt.opts.Instance,
		Lock:      lock,
		Prefault:  rt.info.RealTime,
		Group:     rt.opts.ShmGroup,
		AllowUIDs: rt.opts.ShmAllowUIDs,
	}
}

func (rt *RT) lockShm() bool { return rt.info.RealTime && rt.opts.LockMemory != Off }

// ShmNew creates the segment key with size data bytes, or attaches to it
// when it exists with the same size (rtapi_shmem_new). A segment of
// another size gives *ShmSizeMismatchError (ErrShmSizeMismatch, ErrInvalid);
// a damaged one ErrShmTruncated, ErrShmCorrupt or *ShmVersionError; one
// owned or writable by a user this process does not trust
// *ShmOwnerError (ErrShmUntrusted, os.ErrPermission). A created segment is
// mode 0600, or 0660 of Options.ShmGroup. On a
// real-time flavor the memory is prefaulted and locked; when locking is
// refused and Options.LockMemory is not On, it stays unlocked with a
// warning.
func (rt *RT) ShmNew(key uint32, size int) (*Segment, error) {
	return rt.shmOpen("ShmNew", key, func(o shm.Options) (*shm.Segment, error) { return shm.New(o, key, size) })
}

// ShmAttach attaches to an existing segment of any size; ErrShmNotExist
// (and os.ErrNotExist) when there is none, ErrShmUntrusted as for ShmNew.
func (rt *RT) ShmAttach(key uint32) (*Segment, error) {
	return rt.shmOpen("ShmAttach", key, func(o shm.Options) (*shm.Segment, error) { return shm.Attach(o, key) })
}

// ShmExists reports whether a segment file exists for key.
func (rt *RT) ShmExists(key uint32) (bool, error) {
	return shm.Exists(rt.shmOptions(false), key)
}

// ShmRemove unlinks the segment's name at once, whoever is attached, to
// clear a segment left behind by a crashed process. Attached users keep
// their memory.
func (rt *RT) ShmRemove(key uint32) error {
	return shmErr("ShmRemove", key, shm.Remove(rt.shmOptions(false), key))
}

func (rt *RT) shmOpen(op string, key uint32, open func(shm.Options) (*shm.Segment, error)) (*Segment, error) {
	if rt.isClosed() {
		return nil, fmt.Errorf("rtapi.%s(%#08x): %w", op, key, ErrClosed)
	}
	lock := rt.lockShm()
	s, err := open(rt.shmOptions(lock))
	if err != nil && lock && rt.opts.LockMemory != On && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOMEM)) {
		rt.logger.Warn("shared memory not locked in RAM; page faults may delay tasks",
			zap.Uint32("key", key), zap.Error(err))
		s, err = open(rt.shmOptions(false))
	}
	if err != nil {
		return nil, shmErr(op, key, err)
	}
	return &Segment{seg: s}, nil
}

// shmErr wraps a shm error so that the rtapi sentinels match too.
func shmErr(op string, key uint32, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, shm.ErrInvalid), errors.Is(err, shm.ErrSizeMismatch):
		return fmt.Errorf("rtapi.%s(%#08x): %w (%w)", op, key, err, ErrInvalid)
	}
	return fmt.Errorf("rtapi.%s(%#08x): %w", op, key, err)
}

// Name is the POSIX shared-memory name, "/gortapi-<instance>-<key>".
func (s *Segment) Name() string { return s.seg.Name() }

// Key is the segment key.
func (s *Segment) Key() uint32 { return s.seg.Key() }

// Size is the data size in bytes.
func (s *Segment) Size() int { return s.seg.Size() }

// Created reports whether this attachment created the segment.
func (s *Segment) Created() bool { return s.seg.Created() }

// CreatorPID is the pid of the process that created the segment.
func (s *Segment) CreatorPID() int { return s.seg.CreatorPID() }

// Attached is the attach count kept in the segment (informational: a
// process killed without detaching leaves it high).
func (s *Segment) Attached() int { return s.seg.Attached() }

// Bytes is the segment's data (rtapi_shmem_getptr): Size bytes, 64-byte
// aligned, valid until Close or Delete; nil after. RT-safe.
func (s *Segment) Bytes() []byte { return s.seg.Bytes() }

// Close detaches this attachment. The segment lives on for other users
// and later attaches until someone deletes it.
func (s *Segment) Close() error { return shmErr("Segment.Close", s.seg.Key(), s.seg.Close()) }

// Delete detaches and removes the segment (rtapi_shmem_delete): the name
// goes at once, so a later ShmNew creates a new segment; users still
// attached keep their memory until they close or die, and the kernel frees
// it after the last of them.
func (s *Segment) Delete() error { return shmErr("Segment.Delete", s.seg.Key(), s.seg.Delete()) }

// Check reports whether the segment file still holds all the memory this
// attachment mapped: nil, or *ShmTruncatedError (ErrShmTruncated) when
// another process truncated it. One fstat; not RT-safe.
func (s *Segment) Check() error { return shmErr("Segment.Check", s.seg.Key(), s.seg.Check()) }

// Guard calls f, which reads or writes this segment's memory, and turns a
// fault in it — the file was truncated under the mapping by another
// process, which would otherwise kill this one with SIGBUS — into a
// *ShmTruncatedError (ErrShmTruncated). Faults elsewhere and f's own panics
// pass through. f runs on the calling goroutine; Guard does not allocate
// unless f faults. Use it for monitoring and tools, not in a task body:
// a real-time task that touches a truncated segment still ends the process
// (docs/SECURITY.md).
func (s *Segment) Guard(f func()) error { return shmErr("Segment.Guard", s.seg.Key(), s.seg.Guard(f)) }

// View maps *T onto the segment at byte offset off. T must be
// pointer-free — booleans, numbers, arrays and structs of them, and the
// Mutex, Semaphore and Seqlock types — or the error (a *ShmFieldError,
// ErrInvalid) names the offending field; off must respect T's alignment
// and T must fit. The pointer is valid until the segment is closed.
//
// Not RT-safe (reflection); create views at set-up and use them from
// tasks.
func View[T any](s *Segment, off int) (*T, error) {
	v, err := shm.View[T](s.seg, off)
	return v, shmErr("View", s.seg.Key(), err)
}

// ViewSlice maps n consecutive T values onto the segment at offset off,
// with the same checks as View.
func ViewSlice[T any](s *Segment, off, n int) ([]T, error) {
	v, err := shm.ViewSlice[T](s.seg, off, n)
	return v, shmErr("ViewSlice", s.seg.Key(), err)
}
