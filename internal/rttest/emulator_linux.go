package rttest

import (
	"fmt"
	"syscall"
	"unsafe"
)

// qemuTimerMagic is what qemu-user ORs into the POSIX timer ids it hands
// its guest (TIMER_MAGIC in linux-user/syscall.c); the kernel's own ids
// are small integers counted from 0 in each process.
const (
	qemuTimerMagic     = 0x0caf0000
	qemuTimerMagicMask = 0xffff0000
)

// emulator says which user-mode emulator runs this process ("" when the
// kernel runs it natively). The evidence is qemu-user's own trait: it
// gives timer_create's caller timer ids of its own (0x0caf0000 | n) but
// passes the kernel's ids through in signals. A timer that is created,
// never armed and deleted at once costs nothing and needs no privilege.
func emulator() string {
	var id int32
	_, _, errno := syscall.RawSyscall(syscall.SYS_TIMER_CREATE, 1 /* CLOCK_MONOTONIC */, 0, uintptr(unsafe.Pointer(&id)))
	if errno != 0 {
		return ""
	}
	syscall.RawSyscall(syscall.SYS_TIMER_DELETE, uintptr(id), 0, 0)
	if uint32(id)&qemuTimerMagicMask == qemuTimerMagic {
		return fmt.Sprintf("qemu-user (timer_create returned qemu's timer id %#x)", uint32(id))
	}
	return ""
}
