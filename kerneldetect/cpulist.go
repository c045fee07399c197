package kerneldetect

import "fmt"

// MaxCPU bounds the CPU numbers a CPU list may name: a list such as
// "0-20000000" is refused instead of allocating an entry per CPU.
const MaxCPU = maxCPU

// ParseCPUList parses a CPU list as the kernel, taskset -c and
// cyclictest -a write it: "1", "0,2", "0-3,8". The result is sorted and
// without duplicates; "" gives nil. A negative number, a number not below
// MaxCPU, a reversed range or anything else garbled is an error matching
// ErrInvalid. It is the one parser of CPU lists in gortapi: the sysfs
// files, RTAPI_CPU, -rtapi.cpu and the examples' flags all go through it.
func ParseCPUList(s string) ([]int, error) {
	cpus, err := parseCPUList([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("CPU list %q: %v (want e.g. 1, 0,2 or 2-3, CPUs below %d): %w",
			truncate(s, 64), err, MaxCPU, ErrInvalid)
	}
	return cpus, nil
}

// FormatCPUList writes cpus, sorted, in the kernel's list form ("0-3,8").
func FormatCPUList(cpus []int) string { return formatCPUList(cpus) }
