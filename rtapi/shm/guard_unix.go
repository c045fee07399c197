//go:build unix

package shm

import (
	"fmt"
	"os"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Truncation handling; docs/SECURITY.md, "Truncation".

// Check reports, with one fstat, whether the file still holds everything
// this attachment mapped: nil, a *TruncatedError (ErrTruncated) when it was
// shrunk, or ErrClosed.
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

// Guard calls f on the calling goroutine and returns a *TruncatedError
// (ErrTruncated) instead of crashing when an access in f faults inside this
// segment's mapping because the file was truncated; what f did before the
// fault stays done. Other faults and f's own panics pass through. After
// Close it returns ErrClosed without calling f. It costs a deferred recover
// and allocates only when f faults; it is for code outside task bodies.
func (s *Segment) Guard(f func()) (err error) {
	if s.closed.Load() {
		return fmt.Errorf("guard %s: %w", s.name, ErrClosed)
	}
	if addr := s.guard(f); addr != 0 {
		return &TruncatedError{Name: s.name, FileSize: s.fileSize(), Mapped: len(s.mapping), Fault: addr}
	}
	return nil
}

// Fault returns a *TruncatedError describing v, a recovered panic value,
// when it is a memory fault (debug.SetPanicOnFault) inside this
// attachment's mapping; nil otherwise. Only then it makes one fstat.
func (s *Segment) Fault(v any) *TruncatedError {
	e, ok := v.(interface{ Addr() uintptr })
	if !ok || s.closed.Load() || !s.contains(e.Addr()) {
		return nil
	}
	return &TruncatedError{Name: s.name, FileSize: s.fileSize(), Mapped: len(s.mapping), Fault: e.Addr()}
}

// Orphan replaces this attachment's memory, at the same address and size,
// with private memory holding what could still be read: pointers stay valid
// and stop faulting, but no store is shared any more. It lets a writer that
// found the file truncated (Fault) go on. Orphan after Orphan does nothing;
// ErrClosed after Close, ErrInvalid when read-only. It makes system calls
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

// guard calls f and returns the address of a fault in this mapping, 0 if
// none; other panics pass through. The mapping must still be mapped.
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
