//go:build linux

package main

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/kerneldetect"
)

// availableCPUs are the CPUs this process may run on, in order: where
// cyclictest -S and -t put one thread each.
func availableCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for cpu := range kerneldetect.MaxCPU {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	if len(cpus) == 0 {
		return nil, usagef("no CPU available to this process")
	}
	return cpus, nil
}
