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

// CPUAccount is one CPU's line of /proc/stat, in AccountTicks.
type CPUAccount struct {
	CPU   int   // N of "cpuN"
	Total int64 // user, nice, system, idle, iowait, irq, softirq and steal
	Idle  int64 // idle and iowait
}

// CPUAccounts reads how much time the kernel has accounted to each online
// CPU (/proc/stat), with the monotonic time of the read. Safe for
// concurrent use; it does not allocate after the first call when the
// slice it fills has room for every CPU.
//
// A CPU that did not idle over an interval is accounted a tick per tick:
// its wall time less its accounted time is the time it took no tick, a
// virtual CPU its host stopped without reporting steal time, which a
// thread's CPU-time clock counts as the running thread's (StoppedCPUTime;
// docs/DEPLOY.md, "Virtual machines"). A CPU that idled is not: its idle
// time is measured, its busy time sampled at ticks, and a task whose
// period divides the tick's can be busy at none of them.
type CPUAccounts struct {
	mu  sync.Mutex
	fd  int // -1 until opened
	buf []byte
}

// NewCPUAccounts returns a reader of /proc/stat; Close releases it.
func NewCPUAccounts() *CPUAccounts { return &CPUAccounts{fd: -1} }

// StoppedCPUTime is how long the CPUs took no tick between two reads of
// CPUAccounts taken at at0 and at1, in ns: over each CPU listed in both
// that did not idle in between (its idle and iowait unchanged), wall time
// less accounted time less StopJitter, when positive. 0 for CPUs that
// idled: their accounts cannot tell.
func StoppedCPUTime(prev, cur []CPUAccount, at0, at1 int64) int64 {
	var stopped int64
	i := 0
	for _, c := range cur {
		for i < len(prev) && prev[i].CPU < c.CPU {
			i++
		}
		if i == len(prev) {
			break
		}
		p := prev[i]
		if p.CPU != c.CPU || c.Idle != p.Idle {
			continue
		}
		stopped += max(at1-at0-(c.Total-p.Total)*AccountTick-StopJitter, 0)
	}
	return stopped
}

// StopJitter is how far a busy CPU's accounts can lag its wall time
// over an interval without a stop: a unit (the figures are truncated to
// AccountTicks at both ends) and a tick (HZ 100 at the least).
const StopJitter = 2 * AccountTick

// maxCPULines bounds ParseCPUAccounts: Linux's NR_CPUS is at most 8192.
const maxCPULines = 1 << 20

// ParseCPUAccounts appends to into the per-CPU lines ("cpuN user nice
// system idle iowait irq softirq steal ...") at the start of /proc/stat's
// text b, in increasing CPU order. Lines after the first that is not a
// CPU's are not read. A b that ends inside the CPU lines, a line with
// fewer than eight numbers, a number out of range, CPUs out of order or
// none is ErrProcStat.
func ParseCPUAccounts(b []byte, into []CPUAccount) ([]CPUAccount, error) {
	const maxTicks = 1 << 40 // 348 years: the sum of 8 fits
	line, start := 0, len(into)
	for len(b) > 0 {
		line++
		end := 0
		for end < len(b) && b[end] != '\n' {
			end++
		}
		if end == len(b) {
			return into, fmt.Errorf("%w: line %d not ended (the CPU lines did not fit)", ErrProcStat, line)
		}
		l := b[:end]
		b = b[end+1:]
		if len(l) < 4 || string(l[:3]) != "cpu" {
			break
		}
		if l[3] == ' ' { // the "cpu" total
			continue
		}
		if len(into)-start == maxCPULines {
			return into, fmt.Errorf("%w: over %d CPU lines", ErrProcStat, maxCPULines)
		}
		i, cpu := 3, 0
		for i < len(l) && l[i] >= '0' && l[i] <= '9' && cpu < maxCPULines {
			cpu = cpu*10 + int(l[i]-'0')
			i++
		}
		if i == 3 || i == len(l) || l[i] != ' ' {
			return into, fmt.Errorf("%w: line %d: %.40q is not a CPU's", ErrProcStat, line, l)
		}
		if n := len(into); n > start && into[n-1].CPU >= cpu {
			return into, fmt.Errorf("%w: line %d: cpu%d after cpu%d", ErrProcStat, line, cpu, into[n-1].CPU)
		}
		a := CPUAccount{CPU: cpu}
		for f := range 8 {
			for i < len(l) && l[i] == ' ' {
				i++
			}
			from := i
			var v int64
			for i < len(l) && l[i] >= '0' && l[i] <= '9' {
				v = v*10 + int64(l[i]-'0')
				if v > maxTicks {
					return into, fmt.Errorf("%w: line %d: column %d out of range", ErrProcStat, line, f+1)
				}
				i++
			}
			if i == from || i < len(l) && l[i] != ' ' {
				return into, fmt.Errorf("%w: line %d: column %d is not a number", ErrProcStat, line, f+1)
			}
			a.Total += v
			if f == 3 || f == 4 {
				a.Idle += v
			}
		}
		into = append(into, a)
	}
	if len(into) == start {
		return into, fmt.Errorf("%w: no CPU line", ErrProcStat)
	}
	return into, nil
}
