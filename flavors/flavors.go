package flavors

import (
	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/kerneldetect"
)

// The backends' names, as Names lists them and Select and
// rtapi.Options.Flavor take them.
const (
	PosixName     = "posix"
	RTPreemptName = "rt-preempt"
	SimName       = "sim"
)

// Names lists the backends, sorted.
func Names() []string { return backend.Names() }

// Config is what Select bases its choice on.
type Config struct {
	// Kernel is the detection report; nil: kerneldetect.Detect().
	Kernel *kerneldetect.Report
	// VanillaFIFO asks the posix flavor for SCHED_FIFO + POSIX timers.
	VanillaFIFO bool
	// Strict refuses to run degraded (no SCHED_FIFO, no native backend).
	Strict bool
	// Probe tells whether SCHED_FIFO can be set at prio; nil: a live probe.
	Probe func(prio int) error
}

// Choice is the outcome of Select.
type Choice struct {
	// Name is the chosen backend's name.
	Name string
	// RealTime reports whether its task threads get a real-time policy.
	RealTime bool
	// Why says what was detected, chosen, and what would do better.
	Why string
}

// Select chooses the backend named name ("" or "auto": the best for
// cfg.Kernel) as rtapi.Open would, and says why. It opens and closes the
// backend, locking no memory. One named that cannot run is an error
// matching rtapi.ErrPermission or ErrNotSupported; an unknown name,
// rtapi.ErrInvalid.
func Select(name string, cfg Config) (Choice, error) {
	k, err := backend.DetectKernel(cfg.Kernel)
	if err != nil {
		return Choice{}, err
	}
	ch, err := backend.Select(name, backend.Config{Kernel: k, VanillaFIFO: cfg.VanillaFIFO, Strict: cfg.Strict,
		LockMemory: backend.LockNever, Logger: zap.NewNop(), TimerSignal: backend.DefaultTimerSignal, Probe: cfg.Probe})
	if err != nil {
		return Choice{}, err
	}
	c := Choice{Name: ch.Flavor.Name(), RealTime: ch.Flavor.RealTime(), Why: ch.Why}
	return c, ch.Flavor.Close()
}
