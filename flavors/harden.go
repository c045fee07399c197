//go:build linux

package flavors

import (
	"encoding/binary"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
)

// Process-wide hardening is shared by every open real-time flavor and
// undone when the last one closes: mlockall and /dev/cpu_dma_latency are
// properties of the process, not of one rtapi instance.
var (
	hardenMu    sync.Mutex
	hardenUsers int
	hardenState struct {
		locked   bool
		dma      *os.File
		lockNote string
		dmaNote  string
	}
)

type hardening struct{ once sync.Once }

// harden locks memory and holds /dev/cpu_dma_latency at 0, as LinuxCNC's
// uspace RTAPI does. Failures are warnings: the flavor still runs.
func harden(cfg Config) *hardening {
	hardenMu.Lock()
	defer hardenMu.Unlock()
	hardenUsers++
	if hardenUsers == 1 {
		hardenState.lockNote = ""
		if shouldLock(cfg) {
			if err := sys.LockMemory(); err != nil {
				hardenState.lockNote = "memory not locked: " + err.Error()
				cfg.Logger.Warn(hardenState.lockNote)
			} else {
				hardenState.locked = true
			}
		} else {
			hardenState.lockNote = "memory not locked (LockMemory off, or RLIMIT_MEMLOCK too small to lock safely: Go issue 28081)"
		}
		hardenState.dmaNote = ""
		if f, err := os.OpenFile("/dev/cpu_dma_latency", os.O_RDWR, 0); err == nil {
			var zero [4]byte
			binary.LittleEndian.PutUint32(zero[:], 0)
			if _, err := f.Write(zero[:]); err != nil {
				f.Close()
				hardenState.dmaNote = "cpu_dma_latency not held: " + err.Error()
			} else {
				hardenState.dma = f
			}
		} else {
			hardenState.dmaNote = "cpu_dma_latency not held: " + err.Error()
		}
		if hardenState.dmaNote != "" {
			cfg.Logger.Info(hardenState.dmaNote)
		}
	}
	return &hardening{}
}

// shouldLock decides LockMemory's auto setting: lock when the process may
// lock without limit (root or CAP_IPC_LOCK, or RLIMIT_MEMLOCK unlimited).
// Locking with MCL_FUTURE under a finite limit makes the Go heap die with
// "out of memory" once it grows past it.
func shouldLock(cfg Config) bool {
	switch {
	case cfg.LockMemory > 0:
		return true
	case cfg.LockMemory < 0:
		return false
	}
	if lim, err := sys.MemlockLimit(); err == nil && lim == unix.RLIM_INFINITY {
		return true
	}
	if os.Geteuid() == 0 {
		return true
	}
	return cfg.Kernel != nil && cfg.Kernel.Process.HasCap(kerneldetect.CapIPCLock)
}

func (h *hardening) summary() string {
	if h == nil {
		return ""
	}
	hardenMu.Lock()
	defer hardenMu.Unlock()
	var parts []string
	if hardenState.locked {
		parts = append(parts, "memory locked")
	} else if hardenState.lockNote != "" {
		parts = append(parts, hardenState.lockNote)
	}
	if hardenState.dma != nil {
		parts = append(parts, "cpu_dma_latency held at 0")
	} else if hardenState.dmaNote != "" {
		parts = append(parts, hardenState.dmaNote)
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}

// release undoes harden when the last user goes. Safe on nil and twice.
func (h *hardening) release() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		hardenMu.Lock()
		defer hardenMu.Unlock()
		hardenUsers--
		if hardenUsers > 0 {
			return
		}
		if hardenState.locked {
			_ = sys.UnlockMemory() // nothing to do about a failure here
			hardenState.locked = false
		}
		if hardenState.dma != nil {
			hardenState.dma.Close()
			hardenState.dma = nil
		}
	})
}
