package rtapi

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tracefsMagic is tracefs's statfs f_type. /sys/kernel/debug/tracing is
// tracefs too (an automount) on every kernel since 4.1.
const tracefsMagic = unix.TRACEFS_MAGIC

// extraTraceMagic is a file system type accepted as tracefs, 0 for none:
// tests' fake trace directories (export_test.go).
var extraTraceMagic atomic.Int64

// sysOpenTrace opens file of dir write-only for the trace hook: dir and
// the file must be on a tracefs (fstatfs of each), and file is not
// followed if it is a symlink (a *notTracefsError otherwise).
func sysOpenTrace(dir, file string) (int, error) {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("open "+dir, err)
	}
	defer unix.Close(dfd)
	if err := checkTracefs(dfd, dir); err != nil {
		return -1, err
	}
	path := filepath.Join(dir, file)
	fd, err := unix.Openat(dfd, file, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP {
		return -1, &notTracefsError{path: path}
	}
	if err != nil {
		return -1, os.NewSyscallError("open "+path, err)
	}
	if err := checkTracefs(fd, path); err != nil { // a bind mount over the file
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// checkTracefs returns a *notTracefsError unless fd is on a tracefs.
func checkTracefs(fd int, path string) error {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return os.NewSyscallError("fstatfs "+path, err)
	}
	t := int64(st.Type)
	if t == tracefsMagic || (t != 0 && t == extraTraceMagic.Load()) {
		return nil
	}
	return &notTracefsError{path: path, fsType: t}
}

func sysClose(fd int) { _ = unix.Close(fd) }

// rawWrite writes n bytes at p to fd with one raw system call and reports
// whether the kernel took them.
// RT-safe.
func rawWrite(fd int, p *byte, n int) bool {
	_, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(p)), uintptr(n))
	return errno == 0
}
