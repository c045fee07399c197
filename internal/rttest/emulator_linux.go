package rttest

import (
	"fmt"
	"syscall"
	"unsafe"
)

// qemuTimerMagic is ORed by qemu-user into its guests' timer ids
// (TIMER_MAGIC in linux-user/syscall.c); the kernel's are small integers.
const (
	qemuTimerMagic     = 0x0caf0000
	qemuTimerMagicMask = 0xffff0000
)

// emulator detects qemu-user by the timer id timer_create returns (an
// unarmed timer costs nothing and needs no privilege).
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
