//go:build !linux

package hal

import "github.com/gortapi/gortapi/rtapi"

// Off Linux no stats segment is attached (shm.Attach fails), so a View
// reads threads only from its own host.

type statsLayout struct{ Header statsHeader }

func checkStatsHeader(h *statsHeader, attaching bool) error { return nil }

func (v *View) statsClosed() int64 { return 1 }

func (v *View) readThreads(s *Snapshot) error {
	return errf("view read", "", "", rtapi.ErrNotSupported, "shared memory needs Linux")
}
