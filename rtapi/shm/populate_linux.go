package shm

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapPopulate prefaults a mapping as mmap creates it.
const mapPopulate = unix.MAP_POPULATE

// allocate gives the file length bytes of backing store now, so that a full
// filesystem is ENOSPC here rather than SIGBUS later (plain ftruncate without
// fallocate). tmpfs abandons a fallocate with EINTR on any pending signal,
// so SIGURG (Go's preemption) is blocked meanwhile and other EINTRs retried.
func allocate(fd int, length int64) (op string, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	block := sigset(1) << (unix.SIGURG - 1)
	var old sigset
	if _, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK,
		uintptr(unsafe.Pointer(&block)), uintptr(unsafe.Pointer(&old)), unsafe.Sizeof(old), 0, 0); errno != 0 {
		return "rt_sigprocmask", errno
	}
	defer unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, unsafe.Sizeof(old), 0, 0)

	err = unix.Fallocate(fd, 0, 0, length)
	for i := 0; err == unix.EINTR && i < maxEINTR; i++ {
		err = unix.Fallocate(fd, 0, 0, length)
	}
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS {
		return "ftruncate", unix.Ftruncate(fd, length)
	}
	return "fallocate", err
}

// sigset is the kernel's 64-signal sigset_t (internal/sys checks the size).
type sigset uint64

const maxEINTR = 100
