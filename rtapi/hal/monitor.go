package hal

import (
	"bytes"
	"time"
)

// MonitorOptions say which stats segment to attach to.
type MonitorOptions struct {
	// Key is the host's Options.StatsKey; required.
	Key uint32
	// Instance is the host's rtapi instance number.
	Instance int
	// Dir is the segment directory; "" means /dev/shm.
	Dir string
	// Group and AllowUIDs say whose segments are trusted besides this
	// user's and root's (rtapi.Options.ShmGroup, ShmAllowUIDs): another
	// user's monitor names the host's Options.ShmGroup or uid.
	Group     string
	AllowUIDs []int
	// ReadOnly attaches AttachData's segment read-only (shm.Options.ReadOnly):
	// read permission is enough, and SetP and SetS return an error matching
	// rtapi.ErrPermission. OpenMonitor always attaches read-only.
	ReadOnly bool
}

// Snapshot is what a Monitor reads: the host and its threads.
type Snapshot struct {
	HostPID    int
	HostClosed bool // the host closed its HAL; the values are final
	BasePeriod time.Duration
	Threads    []ThreadStats
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
