//go:build unix && !linux

package shm

import "golang.org/x/sys/unix"

// mapPopulate is 0: Options.Prefault is a no-op here.
const mapPopulate = 0

// allocate sizes the file; create's guarded header write catches a full
// filesystem.
func allocate(fd int, length int64) (op string, err error) {
	return "ftruncate", unix.Ftruncate(fd, length)
}
