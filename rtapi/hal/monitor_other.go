//go:build !linux

package hal

import "github.com/gortapi/gortapi/rtapi"

// Monitor reads a HAL's stats segment; shared memory is Linux-only here.
type Monitor struct{}

// OpenMonitor is ErrNotSupported off Linux.
func OpenMonitor(o MonitorOptions) (*Monitor, error) {
	return nil, errf("open monitor", "", "", rtapi.ErrNotSupported, "shared memory needs Linux")
}

// Read is ErrNotSupported off Linux.
func (m *Monitor) Read() (Snapshot, error) {
	return Snapshot{}, errf("monitor read", "", "", rtapi.ErrNotSupported, "shared memory needs Linux")
}

// HostAlive is false off Linux.
func (m *Monitor) HostAlive() bool { return false }

// Close is a no-op off Linux.
func (m *Monitor) Close() error { return nil }

// HostPID is 0 off Linux.
func (m *Monitor) HostPID() int { return 0 }

// HostGone is true off Linux.
func (m *Monitor) HostGone() bool { return true }
