package sys

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Where these layouts come from: HACKING.md, "Kernel structures laid out
// by hand".

const (
	ptrSize      = unsafe.Sizeof(uintptr(0))
	sigevMaxSize = 64  // SIGEV_MAX_SIZE: sizeof(struct sigevent) everywhere
	siMaxSize    = 128 // SI_MAX_SIZE: sizeof(siginfo_t) everywhere
)

// sigevent is the kernel's struct sigevent for SIGEV_THREAD_ID: a sigval
// (pointer-sized), sigev_signo, sigev_notify, then the union whose first
// int is the thread id, padded to SIGEV_MAX_SIZE.
type sigevent struct {
	value  uintptr
	signo  int32
	notify int32
	tid    int32
	_      [sigevMaxSize - ptrSize - 3*4]byte
}

const sigevThreadID = 4 // SIGEV_THREAD_ID

// siginfo is the kernel's siginfo_t, with the fields of a POSIX timer
// signal spelled out: si_signo, si_errno, si_code, then the _sifields
// union at pointer alignment (offset 16 on 64-bit, 12 on 32-bit), whose
// _timer member starts with si_timerid and si_overrun.
type siginfo struct {
	signo   int32
	errno   int32
	code    int32
	_       [ptrSize - 4]byte // the union's alignment padding
	timerID int32
	overrun int32
	_       [siMaxSize - 3*4 - (ptrSize - 4) - 2*4]byte
}

// sigset is the kernel's sigset_t: 64 signals (_NSIG) on every supported
// architecture. On 32-bit ones the kernel sees two 32-bit longs, which on
// these little-endian machines is the same memory as one uint64.
type sigset uint64

// cpuSetSize is the number of CPUs a unix.CPUSet (the kernel's
// cpu_set_t) holds: 1024 on every architecture, in 64-bit words on
// 64-bit ones and 32-bit words on 32-bit ones.
const cpuSetSize = int(unsafe.Sizeof(unix.CPUSet{})) * 8
