//go:build linux && (386 || arm || mips || mipsle)

package sys

import "math"

// The kernel's time ABI on 32-bit Linux: the system calls gortapi uses
// (clock_nanosleep, timer_settime, timerfd_settime, futex) take the
// 32-bit struct timespec, whose tv_sec is a 32-bit long. Every time passed
// to them is on CLOCK_MONOTONIC, which counts from boot, so 32 bits of
// seconds (68 years) never run out; Timespec saturates beyond.
type timespecField = int32

const maxTimespecSec = math.MaxInt32
