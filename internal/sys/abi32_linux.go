//go:build linux && (386 || arm || mips || mipsle)

package sys

import "math"

// 32-bit Linux: the syscalls gortapi uses take a 32-bit tv_sec. Times are
// on CLOCK_MONOTONIC (from boot): 68 years never run out; Timespec saturates.
type timespecField = int32

const maxTimespecSec = math.MaxInt32
