package rttest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
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

// tcgModel is the model name qemu's TCG gives its "max" CPU (qemu 7.2:
// "QEMU TCG CPU version 2.5+"), the one CI's 386 guest runs on.
const tcgModel = "QEMU TCG CPU"

// cpuEmulator detects a machine whose CPU qemu emulates (TCG) by the
// model name in cpuinfo.
func cpuEmulator() string { return tcgIn("/proc/cpuinfo") }

func tcgIn(cpuinfo string) string {
	b, err := os.ReadFile(cpuinfo)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(name) == "model name" && strings.Contains(value, tcgModel) {
			return "an emulated CPU (" + strings.TrimSpace(value) + ")"
		}
	}
	return ""
}
