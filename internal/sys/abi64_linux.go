//go:build linux && !(386 || arm || mips || mipsle)

package sys

import "math"

// 64-bit Linux: struct timespec holds 64-bit longs.
type timespecField = int64

const maxTimespecSec = math.MaxInt64
