//go:build unix && !linux

package shm

import "golang.org/x/sys/unix"

// mapPopulate is 0 where mmap cannot prefault: Options.Prefault is then a
// no-op and pages fault in on first touch.
const mapPopulate = 0

// allocate sizes the file. Without fallocate, a full filesystem shows only
// when a store faults, which create's guarded header write turns into an
// error.
func allocate(fd int, length int64) (op string, err error) {
	return "ftruncate", unix.Ftruncate(fd, length)
}
