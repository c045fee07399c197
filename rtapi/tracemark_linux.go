package rtapi

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// sysOpenWrite opens path write-only for the trace hook.
func sysOpenWrite(path string) (int, error) {
	return unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
}

func sysClose(fd int) { _ = unix.Close(fd) }

// rawWrite writes n bytes at p to fd with one raw system call and reports
// whether the kernel took them.
// RT-safe.
func rawWrite(fd int, p *byte, n int) bool {
	_, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(p)), uintptr(n))
	return errno == 0
}
