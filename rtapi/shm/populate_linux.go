package shm

import "golang.org/x/sys/unix"

// mapPopulate prefaults a mapping as mmap creates it.
const mapPopulate = unix.MAP_POPULATE

// allocate gives the file length bytes of backing store now, so that a full
// filesystem is ENOSPC here rather than SIGBUS on the first store into the
// mapping. A filesystem without fallocate gets a plain ftruncate.
func allocate(fd int, length int64) (op string, err error) {
	err = unix.Fallocate(fd, 0, 0, length)
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS {
		return "ftruncate", unix.Ftruncate(fd, length)
	}
	return "fallocate", err
}
