//go:build linux && !(386 || arm || mips || mipsle)

package sys

import "math"

// The kernel's time ABI on 64-bit Linux: struct timespec's tv_sec and
// tv_nsec are 64-bit longs (abi32_linux.go has the 32-bit case).
type timespecField = int64

const maxTimespecSec = math.MaxInt64
