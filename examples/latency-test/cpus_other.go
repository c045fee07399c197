//go:build !linux

package main

import "runtime"

// availableCPUs are 0 to runtime.NumCPU()-1 where there is no affinity to
// read: cyclictest's -S and -t still get one thread per CPU.
func availableCPUs() ([]int, error) {
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus, nil
}
