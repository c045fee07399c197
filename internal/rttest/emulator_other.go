//go:build !linux

package rttest

// emulator: elsewhere than Linux the process is taken as native.
func emulator() string { return "" }
