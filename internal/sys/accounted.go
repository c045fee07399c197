package sys

import (
	"errors"
	"fmt"
	"sync"
)

// AccountTick is /proc/stat's unit, 1/USER_HZ seconds, in nanoseconds:
// USER_HZ is 100 on every Linux ABI.
const AccountTick = 10_000_000

// ErrProcStat reports a /proc/stat that cannot be read as Linux writes it.
var ErrProcStat = errors.New("unexpected /proc/stat")

// CPUAccounts reads how much time the kernel has accounted to the online
// CPUs (/proc/stat): each CPU's user, nice, system, idle, iowait, irq,
// softirq and steal time summed over the CPUs, in AccountTicks, with the
// number of CPUs and the monotonic time of the read. Safe for concurrent
// use; it does not allocate after the first call.
//
// Over an interval, wall time × CPUs less the accounted time is the time
// a busy CPU took no tick: a virtual CPU its host stopped without
// reporting steal time, which a thread's CPU-time clock counts as the
// running thread's (docs/DEPLOY.md, "Virtual machines"). The kernel
// accounts in ticks, so each CPU's figure lags by up to a tick.
type CPUAccounts struct {
	mu  sync.Mutex
	fd  int // -1 until opened
	buf []byte
}

// NewCPUAccounts returns a reader of /proc/stat; Close releases it.
func NewCPUAccounts() *CPUAccounts { return &CPUAccounts{fd: -1} }

// maxCPULines bounds ParseCPUAccounts: Linux's NR_CPUS is at most 8192.
const maxCPULines = 1 << 20

// ParseCPUAccounts sums the per-CPU lines ("cpuN user nice system idle
// iowait irq softirq steal ...") at the start of /proc/stat's text b, in
// AccountTicks, and counts them. Lines after the first that is not a CPU's
// are not read. A b that ends inside the CPU lines, a line with fewer
// than eight numbers or a number out of range is ErrProcStat.
func ParseCPUAccounts(b []byte) (accounted int64, cpus int, err error) {
	const maxTicks = 1 << 40 // 348 years: 8 per line, maxCPULines lines fit
	line := 0
	for len(b) > 0 {
		line++
		end := 0
		for end < len(b) && b[end] != '\n' {
			end++
		}
		if end == len(b) {
			return 0, 0, fmt.Errorf("%w: line %d not ended (the CPU lines did not fit)", ErrProcStat, line)
		}
		l := b[:end]
		b = b[end+1:]
		if len(l) < 4 || string(l[:3]) != "cpu" {
			break
		}
		if l[3] == ' ' { // the "cpu" total
			continue
		}
		if cpus == maxCPULines {
			return 0, 0, fmt.Errorf("%w: over %d CPU lines", ErrProcStat, maxCPULines)
		}
		i := 3
		for i < len(l) && l[i] >= '0' && l[i] <= '9' {
			i++
		}
		if i == 3 || i == len(l) || l[i] != ' ' {
			return 0, 0, fmt.Errorf("%w: line %d: %.40q is not a CPU's", ErrProcStat, line, l)
		}
		var sum int64
		for f := range 8 {
			for i < len(l) && l[i] == ' ' {
				i++
			}
			start := i
			var v int64
			for i < len(l) && l[i] >= '0' && l[i] <= '9' {
				v = v*10 + int64(l[i]-'0')
				if v > maxTicks {
					return 0, 0, fmt.Errorf("%w: line %d: column %d out of range", ErrProcStat, line, f+1)
				}
				i++
			}
			if i == start || i < len(l) && l[i] != ' ' {
				return 0, 0, fmt.Errorf("%w: line %d: column %d is not a number", ErrProcStat, line, f+1)
			}
			sum += v
		}
		accounted += sum
		cpus++
	}
	if cpus == 0 {
		return 0, 0, fmt.Errorf("%w: no CPU line", ErrProcStat)
	}
	return accounted, cpus, nil
}
