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

// sigevent is the kernel's struct sigevent for SIGEV_THREAD_ID, padded
// to SIGEV_MAX_SIZE.
type sigevent struct {
	value  uintptr
	signo  int32
	notify int32
	tid    int32
	_      [sigevMaxSize - ptrSize - 3*4]byte
}

const sigevThreadID = 4 // SIGEV_THREAD_ID

// siginfo is the kernel's siginfo_t with a POSIX timer's fields: the
// _sifields union starts at pointer alignment with si_timerid, si_overrun.
type siginfo struct {
	signo   int32
	errno   int32
	code    int32
	_       [ptrSize - 4]byte // the union's alignment padding
	timerID int32
	overrun int32
	_       [siMaxSize - 3*4 - (ptrSize - 4) - 2*4]byte
}

// sigset is the kernel's sigset_t: 64 signals on every supported
// architecture (two 32-bit longs on 32-bit little-endian: the same memory).
type sigset uint64

// cpuSetSize is the number of CPUs a unix.CPUSet (cpu_set_t) holds: 1024.
const cpuSetSize = int(unsafe.Sizeof(unix.CPUSet{})) * 8
