//go:build unix

package shm

import (
	"fmt"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Truncation. Another process that may write the segment file may also
// shrink it (ftruncate). The mapping keeps its length, but the pages past
// the file's new end are gone: touching them raises SIGBUS, which kills a Go
// program ("fatal error: fault"). The kernel offers no way to forbid it on a
// shared-memory file (seals exist only for memfd), so gortapi contains it
// where it can:
//
//   - attach checks the file's size against the header, so a segment
//     truncated before attach is refused (ErrTruncated);
//   - Check compares the file's size with the mapping, for code that wants
//     to look before it reads, or to explain an error after;
//   - Guard runs reading or writing code with the fault turned into a
//     panic (runtime/debug.SetPanicOnFault) that it recovers and returns as
//     a *TruncatedError. Readers outside real-time tasks (monitors, tools)
//     go through it.
//
// What is not contained: a real-time task body that touches a truncated
// segment directly still faults and the process dies, because a task's hot
// path takes no recover and no system call. Only a user that may write the
// file can truncate it (see Options.Group and the ownership checks on
// attach), so this is a trusted writer misbehaving, not a stranger.

// Check reports, with one fstat, whether the file still holds everything
// this attachment mapped: nil, a *TruncatedError (ErrTruncated) when it was
// shrunk, or ErrClosed. Not RT-safe (a system call); call it from set-up or
// monitoring code.
func (s *Segment) Check() error {
	if s.closed.Load() {
		return fmt.Errorf("check %s: %w", s.name, ErrClosed)
	}
	size := s.fileSize()
	if size < int64(len(s.mapping)) {
		return &TruncatedError{Name: s.name, FileSize: size, Mapped: len(s.mapping)}
	}
	return nil
}

// fileSize is the file's size now, -1 when fstat fails.
func (s *Segment) fileSize() int64 {
	var st unix.Stat_t
	if err := unix.Fstat(s.fd, &st); err != nil {
		return -1
	}
	return st.Size
}

// Guard calls f, which reads or writes this segment's memory, and returns
// a *TruncatedError (ErrTruncated) instead of crashing when an access in f
// faults inside the mapping because the file was truncated under it. What
// f did before the fault stays done. A fault outside this segment's mapping
// is not this segment's business: Guard panics again with it. A panic of
// f's own passes through unchanged. After Close, Guard returns ErrClosed
// without calling f.
//
// f runs on the calling goroutine. Guard costs a deferred recover and two
// runtime calls; it does not allocate unless f faults. It is meant for
// reading code outside real-time tasks; a task body does not use it (see
// the package's notes on truncation).
func (s *Segment) Guard(f func()) (err error) {
	if s.closed.Load() {
		return fmt.Errorf("guard %s: %w", s.name, ErrClosed)
	}
	if addr := s.guard(f); addr != 0 {
		return &TruncatedError{Name: s.name, FileSize: s.fileSize(), Mapped: len(s.mapping), Fault: addr}
	}
	return nil
}

// guard calls f and returns the address at which an access in f faulted
// inside this attachment's mapping, 0 when none did. Other faults and
// panics pass through. The mapping must still be mapped.
func (s *Segment) guard(f func()) (fault uintptr) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		e, ok := r.(interface{ Addr() uintptr })
		if !ok || !s.contains(e.Addr()) {
			panic(r)
		}
		fault = e.Addr()
	}()
	f()
	return 0
}

// contains reports whether addr lies in this attachment's mapping.
func (s *Segment) contains(addr uintptr) bool {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s.mapping)))
	return addr >= base && addr-base < uintptr(len(s.mapping))
}
