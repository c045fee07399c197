//go:build unix && !linux

package shm

// mapPopulate is 0 where mmap cannot prefault: Options.Prefault is then a
// no-op and pages fault in on first touch.
const mapPopulate = 0
