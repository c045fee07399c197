package rtapi

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
)

// cpuFacts are what task placement is checked against, copied at Open so
// that a later change to the report cannot reach sched_setaffinity.
type cpuFacts struct {
	online    []int // online CPUs (nil: unknown)
	isolated  []int // isolated CPUs, ascending
	cpuset    []int // the CPUs sched_setaffinity may use (nil: unknown, off Linux)
	cpusetErr error // why the cpuset could not be read; matters only to pinning
}

// readCPUFacts copies the report's CPU lists and reads the cpuset.
func readCPUFacts(k *kerneldetect.Report) cpuFacts {
	f := cpuFacts{online: slices.Clone(k.OnlineCPUs), isolated: slices.Clone(k.IsolatedCPUs)}
	cpuset, err := sys.AllowedCPUs()
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		// No cpusets here (the sim flavor off Linux): nothing to check.
	case err != nil:
		f.cpusetErr = fmt.Errorf("cannot read this process's cpuset: %w", err)
	default:
		f.cpuset = cpuset
	}
	return f
}

// check refuses a CPU that is negative, not online (when the report
// knows) or outside the process's cpuset.
func (f *cpuFacts) check(c int) error {
	switch {
	case c < 0:
		return fmt.Errorf("CPU %d is negative: %w", c, ErrInvalid)
	case len(f.online) > 0 && !slices.Contains(f.online, c):
		return fmt.Errorf("CPU %d is not online (online: %v): %w", c, f.online, ErrInvalid)
	case f.cpusetErr != nil:
		return fmt.Errorf("CPU %d: %w", c, f.cpusetErr)
	case f.cpuset != nil && !slices.Contains(f.cpuset, c):
		return fmt.Errorf("CPU %d is outside this process's cpuset %s (the CPUs sched_setaffinity may use): %w",
			c, kerneldetect.FormatCPUList(f.cpuset), ErrInvalid)
	}
	return nil
}

func (f *cpuFacts) checkAll(cpus []int) error {
	for _, c := range cpus {
		if err := f.check(c); err != nil {
			return err
		}
	}
	return nil
}

// highestIsolated is LinuxCNC's automatic choice: the highest isolated
// CPU, here the highest one the cpuset allows; -1 when there is none.
func (f *cpuFacts) highestIsolated() (int, error) {
	if len(f.isolated) > 0 && f.cpusetErr != nil {
		return -1, fmt.Errorf("place a task on an isolated CPU: %w", f.cpusetErr)
	}
	for _, c := range slices.Backward(f.isolated) {
		if f.check(c) == nil {
			return c, nil
		}
	}
	return -1, nil
}

// placeCPU turns a CPUChoice into the task's own CPU set (nil: unpinned).
func (rt *RT) placeCPU(c CPUChoice) ([]int, error) {
	switch {
	case c == Unpinned:
		return nil, nil
	case c == CPUAuto:
		if len(rt.opts.CPUs) > 0 {
			return slices.Clone(rt.opts.CPUs), nil
		}
		iso, err := rt.cpus.highestIsolated()
		if err != nil || iso < 0 {
			return nil, err
		}
		return []int{iso}, nil
	case c < Unpinned:
		return nil, fmt.Errorf("CPU choice OnCPU(%d): a CPU number cannot be negative: %w", c.cpu(), ErrInvalid)
	}
	n := c.cpu()
	if err := rt.cpus.check(n); err != nil {
		return nil, err
	}
	return []int{n}, nil
}
