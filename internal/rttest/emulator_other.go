//go:build !linux

package rttest

// emulator: elsewhere than Linux the process is taken as native.
func emulator() string { return "" }

// cpuEmulator: elsewhere than Linux the CPU is taken as real.
func cpuEmulator() string { return "" }
