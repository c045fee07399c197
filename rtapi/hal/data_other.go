//go:build !linux

package hal

import "github.com/gortapi/gortapi/rtapi/shm"

// segmentHost: shm.Create never finds a segment here (no POSIX shared
// memory is used outside Linux), so there is no host to ask about.
func segmentHost(o shm.Options, key uint32) (int, bool, error) { return 0, false, nil }
