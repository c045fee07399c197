//go:build !linux

package rttest

// emulator: the qemu-user evidence is Linux's; elsewhere the process is
// taken as native.
func emulator() string { return "" }
