package gpio

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/errs"
)

// Lines is a request of one chip's lines, held until Close. Bit i of a
// value is the request's line i, in the order Chip.Request was given.
// Get and Set are one ioctl each, allocate nothing and take no lock; they
// may run concurrently with each other (the kernel orders them), not with
// Close.
type Lines struct {
	fd   int
	n    int
	mask uint64
}

// Len is how many lines the request holds.
func (l *Lines) Len() int { return l.n }

// Get reads every line of the request: one GPIO_V2_LINE_GET_VALUES_IOCTL.
// An output reads back the value it drives.
// RT-safe.
func (l *Lines) Get() (uint64, error) {
	v := lineValues{mask: l.mask}
	if err := ioctlValues(l.fd, lineGetValues, &v); err != nil {
		return 0, err
	}
	return v.bits, nil
}

// Set drives the request's output lines to bits, those of mask only: one
// GPIO_V2_LINE_SET_VALUES_IOCTL. Setting an input line is refused by
// the kernel (EPERM).
// RT-safe.
func (l *Lines) Set(bits, mask uint64) error {
	v := lineValues{bits: bits, mask: mask & l.mask}
	return ioctlValues(l.fd, lineSetValues, &v)
}

// Close releases the lines: the kernel frees them for other consumers.
// What a released output line then does depends on the chip's driver
// (docs/GPIO.md). Later calls return errs.Closed.
func (l *Lines) Close() error {
	if l.fd < 0 {
		return errs.Closed
	}
	err := unix.Close(l.fd)
	l.fd = -1
	return os.NewSyscallError("close", err)
}

// errValuesClosed is Get's and Set's error after Close, made once.
var errValuesClosed error = &os.SyscallError{Syscall: "ioctl", Err: unix.EBADF}

// ioctlValues is the hot path's one system call, retried on EINTR. v
// stays on the caller's stack: unix.Syscall keeps what a uintptr
// argument points at alive and in place for the call
// (go:uintptrkeepalive), and TestGetSetDoNotAllocate checks nothing
// escapes.
// RT-safe.
func ioctlValues(fd int, req uintptr, v *lineValues) error {
	if fd < 0 {
		return errValuesClosed
	}
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(v)))
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return e // an Errno below 256 in an interface allocates nothing
	}
}

// ioctl is the set-up code's ioctl, retried on EINTR.
func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return os.NewSyscallError("ioctl", e)
	}
}
