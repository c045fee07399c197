package shm

import "golang.org/x/sys/unix"

// mapPopulate prefaults a mapping as mmap creates it.
const mapPopulate = unix.MAP_POPULATE
