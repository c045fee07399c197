//go:build linux

package backend

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/remedy"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
)

// Process-wide hardening, shared by every open real-time flavor: memory
// stays locked while an open instance asked for it (never unlocked if the
// program had locked memory itself); cpu_dma_latency is held while any
// instance is open.
var (
	hardenMu    sync.Mutex
	hardenUsers int
	hardenState struct {
		lockers   int  // open instances that asked for locked memory
		locked    bool // mlockall done by us
		preLocked bool // the program held locked memory before our mlockall
		dma       *os.File
		lockNote  string
		dmaNote   string
	}
)

type hardening struct {
	once sync.Once
	lock bool // this instance counts among hardenState.lockers
}

// harden locks memory and holds /dev/cpu_dma_latency at 0, as LinuxCNC's
// uspace RTAPI does; failures are only warnings.
func harden(cfg Config) *hardening {
	hardenMu.Lock()
	defer hardenMu.Unlock()
	hardenUsers++
	h := &hardening{}
	switch {
	case shouldLock(cfg):
		h.lock = true
		hardenState.lockers++
		if !hardenState.locked {
			lockMemory(cfg)
		}
	case hardenState.lockers == 0:
		hardenState.lockNote = "memory not locked (LockMemory off, or RLIMIT_MEMLOCK too small to lock safely: Go issue 28081)"
	}
	if hardenUsers == 1 {
		hardenState.dmaNote = ""
		if f, err := os.OpenFile("/dev/cpu_dma_latency", os.O_RDWR, 0); err == nil {
			var zero [4]byte
			binary.LittleEndian.PutUint32(zero[:], 0)
			if _, err := f.Write(zero[:]); err != nil {
				f.Close()
				hardenState.dmaNote = dmaNote(err)
			} else {
				hardenState.dma = f
			}
		} else {
			hardenState.dmaNote = dmaNote(err)
		}
		if hardenState.dmaNote != "" {
			cfg.Logger.Info(hardenState.dmaNote)
		}
	}
	return h
}

// lockMemory calls mlockall, noting first whether the program holds
// locked memory (or that is unknown): release then keeps the lock.
// hardenMu held; after a failure the next instance tries again.
func lockMemory(cfg Config) {
	held, err := sys.LockedMemory()
	hardenState.preLocked = err != nil || held > 0
	if err := sys.LockMemory(); err != nil {
		hardenState.lockNote = "memory not locked: " + err.Error()
		cfg.Logger.Warn(hardenState.lockNote)
		return
	}
	hardenState.locked = true
	switch {
	case err != nil:
		hardenState.lockNote = "memory locked; left locked at Close, since whether the program had locked memory " +
			"itself could not be read (" + err.Error() + ")"
	case held > 0:
		hardenState.lockNote = "memory locked; the program held locked memory itself (VmLck " +
			strconv.FormatInt(held>>10, 10) + " kB), so it is left locked at Close"
	default:
		hardenState.lockNote = ""
	}
}

// shouldLock resolves cfg.LockMemory (see sys.LockMemory for why a finite
// limit is not enough).
func shouldLock(cfg Config) bool {
	switch cfg.LockMemory {
	case LockAlways:
		return true
	case LockNever:
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
	switch {
	case hardenState.locked && hardenState.lockNote != "":
		parts = append(parts, hardenState.lockNote)
	case hardenState.locked:
		parts = append(parts, "memory locked")
	case hardenState.lockNote != "":
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

// release undoes harden for this instance. Safe on nil and twice.
func (h *hardening) release() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		hardenMu.Lock()
		defer hardenMu.Unlock()
		hardenUsers--
		if h.lock {
			hardenState.lockers--
			if hardenState.lockers == 0 && hardenState.locked {
				if !hardenState.preLocked {
					_ = sys.UnlockMemory() // nothing to do about a failure here
				}
				hardenState.locked = false
			}
		}
		if hardenUsers > 0 {
			return
		}
		if hardenState.dma != nil {
			hardenState.dma.Close()
			hardenState.dma = nil
		}
	})
}

// dmaNote says why cpu_dma_latency is not held, with the remedy for EPERM.
func dmaNote(err error) string {
	note := "cpu_dma_latency not held: " + err.Error()
	if errors.Is(err, fs.ErrPermission) {
		note += " (" + remedy.DMALatency + ")"
	}
	return note
}
