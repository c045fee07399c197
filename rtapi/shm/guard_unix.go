//go:build unix

package shm

import (
	"fmt"
	"os"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Truncation: a process that may write the segment file may also shrink
// it, and touching the pages past the new end raises SIGBUS. Attach
// refuses a truncated file, Check compares sizes, Guard turns the fault
// into an error, and Fault and Orphan let a writer that cannot guard each
// store recover. docs/SECURITY.md ("Truncation") has the design and what
// stays uncontained.

// Check reports, with one fstat, whether the file still holds everything
// this attachment mapped: nil, a *TruncatedError (ErrTruncated) when it was
// shrunk, or ErrClosed. Being a system call, it belongs in set-up or
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
// the package doc on truncation).
func (s *Segment) Guard(f func()) (err error) {
	if s.closed.Load() {
		return fmt.Errorf("guard %s: %w", s.name, ErrClosed)
	}
	if addr := s.guard(f); addr != 0 {
		return &TruncatedError{Name: s.name, FileSize: s.fileSize(), Mapped: len(s.mapping), Fault: addr}
	}
	return nil
}

// Fault returns a *TruncatedError (ErrTruncated) describing v when v, a
// value recovered from a panic, is a memory fault (runtime/debug.
// SetPanicOnFault) at an address inside this attachment's mapping; nil for
// any other value. It reads the file's size (one fstat) only when v is
// such a fault.
func (s *Segment) Fault(v any) *TruncatedError {
	e, ok := v.(interface{ Addr() uintptr })
	if !ok || s.closed.Load() || !s.contains(e.Addr()) {
		return nil
	}
	return &TruncatedError{Name: s.name, FileSize: s.fileSize(), Mapped: len(s.mapping), Fault: e.Addr()}
}

// Orphan replaces this attachment's memory, at the same address and size,
// with private memory holding what could still be read of it: every
// pointer into the segment stays valid, stores through it stop faulting,
// and nothing written reaches another process any more, nor theirs this
// one. It is the recovery of a writer that found the file truncated (see
// Fault) and must go on, such as a real-time task. Close and Delete work
// as before. Orphan after Orphan does nothing; after Close it returns
// ErrClosed, on a read-only attachment ErrInvalid. It makes system calls
// and allocates a copy of the mapping.
func (s *Segment) Orphan() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed.Load():
		return fmt.Errorf("orphan %s: %w", s.name, ErrClosed)
	case s.readOnly:
		return fmt.Errorf("orphan %s: the attachment is read-only: %w", s.name, ErrInvalid)
	case s.orphaned:
		return nil
	}
	saved := make([]byte, len(s.mapping))
	page := unix.Getpagesize()
	for off := 0; off < len(saved); off += page {
		end := min(off+page, len(saved))
		if s.guard(func() { copy(saved[off:end], s.mapping[off:end]) }) != 0 {
			break // the rest lies past the file's end: zeros
		}
	}
	base := unsafe.Pointer(unsafe.SliceData(s.mapping))
	_, err := unix.MmapPtr(-1, 0, base, uintptr(len(s.mapping)), unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED)
	if err != nil {
		return fmt.Errorf("orphan %s: %w", s.name, os.NewSyscallError("mmap", err))
	}
	copy(s.mapping, saved)
	s.orphaned = true
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
