//go:build linux

package backend

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/remedy"
	"github.com/gortapi/gortapi/internal/sys"
)

func init() {
	Register(Descriptor{Name: PosixName, Open: openPosix})
	Register(Descriptor{Name: RTPreemptName, Open: openRTPreempt})
}

// linuxFlavor is both Linux backends: they differ in SCHED_FIFO and the
// default wake mode.
type linuxFlavor struct {
	name        string
	fifo        bool // task threads get SCHED_FIFO
	mustFIFO    bool // refusal is an error, not a warning
	highest     int  // highest task priority (fifoHighest)
	defaultWake WakeMode
	log         *zap.Logger
	hardening   *hardening
	warnedFIFO  atomic.Bool // Binds run on many task threads at once
	degraded    string      // every Binding's Degraded
	timerSignal int
}

func openPosix(cfg Config) (Flavor, string, error) {
	f := &linuxFlavor{name: PosixName, defaultWake: WakeNanosleep, highest: prioHighest, log: cfg.Logger,
		timerSignal: cfg.TimerSignal}
	if !cfg.VanillaFIFO {
		return f, "posix flavor: SCHED_OTHER threads and absolute sleeps to each release, no real-time guarantee " +
			"(set VanillaFIFO, RTAPI_VANILLA_FIFO=1 or -rtapi.vanilla-fifo for SCHED_FIFO + POSIX timers; " +
			"boot a PREEMPT_RT kernel for real-time)", nil
	}
	f.defaultWake = WakePosixTimer
	highest, limited, err := cfg.fifoHighest()
	if err != nil {
		msg := "VanillaFIFO: SCHED_FIFO cannot be set (" + err.Error() + "); " + fifoRemedy(err)
		if cfg.Strict {
			return nil, "", fmt.Errorf("%s; Strict refuses to run without it: %w: %w", msg, ErrPermission, err)
		}
		cfg.Logger.Warn(msg + "; running SCHED_OTHER with POSIX timers")
		f.degraded = "VanillaFIFO: SCHED_FIFO refused to this process (" + err.Error() + "): running SCHED_OTHER"
		return f, msg + "; running SCHED_OTHER threads woken by POSIX timers", nil
	}
	f.fifo, f.mustFIFO, f.highest = true, cfg.Strict, highest
	f.hardening = harden(cfg)
	return f, "VanillaFIFO: SCHED_FIFO threads woken by periodic POSIX timers aimed at each thread (real-time scheduling on a non-RT kernel)" + limited + f.hardening.summary(), nil
}

func openRTPreempt(cfg Config) (Flavor, string, error) {
	highest, limited, err := cfg.fifoHighest()
	if err != nil {
		return nil, "", fmt.Errorf("SCHED_FIFO cannot be set (%w); %s: %w", err, fifoRemedy(err), ErrPermission)
	}
	f := &linuxFlavor{name: RTPreemptName, fifo: true, mustFIFO: true, highest: highest,
		defaultWake: WakeNanosleep, log: cfg.Logger, timerSignal: cfg.TimerSignal}
	f.hardening = harden(cfg)
	return f, "rt-preempt flavor: SCHED_FIFO threads, absolute sleeps to each release" + limited + f.hardening.summary(), nil
}

// fifoHighest returns the highest SCHED_FIFO task priority, and a clause
// for the flavor's why when it is below prioHighest. It probes the
// watchdog's priority, prioHighest+1; where RLIMIT_RTPRIO is lower it
// bisects for the limit, where the watchdog goes, tasks below. The error
// is the kernel's when SCHED_FIFO is refused at every priority.
func (c *Config) fifoHighest() (highest int, limited string, err error) {
	top := prioHighest + 1 // the watchdog's
	err = c.probe(top)
	if err == nil {
		return prioHighest, "", nil
	}
	if !errors.Is(err, unix.EPERM) {
		return 0, "", err
	}
	if err := c.probe(prioLowest); err != nil {
		return 0, "", err
	}
	allowed, refused := prioLowest, top
	for refused-allowed > 1 {
		if mid := (allowed + refused) / 2; c.probe(mid) == nil {
			allowed = mid
		} else {
			refused = mid
		}
	}
	limit := ""
	if l, err := sys.RTPrioLimit(); err == nil && l == uint64(allowed) {
		limit = fmt.Sprintf(" (RLIMIT_RTPRIO %d)", l)
	}
	highest = max(prioLowest, allowed-1)
	watchdog := fmt.Sprintf("the watchdog at %d above them", allowed)
	if highest == allowed {
		watchdog = "the watchdog cannot run above them"
	}
	return highest, fmt.Sprintf("; SCHED_FIFO is allowed up to priority %d only%s: task priorities %d to %d, %s "+
		"(an rtprio limit of %d, e.g. @%s - rtprio %d in %s, gives the full range)",
		allowed, limit, prioLowest, highest, watchdog, top, remedy.Group, top, remedy.LimitsFile), nil
}

// fifoRemedy names the concrete fix for a refused SCHED_FIFO.
func fifoRemedy(err error) string {
	if errors.Is(err, unix.EPERM) {
		return "grant it with `setcap cap_sys_nice,cap_ipc_lock+ep BINARY`, an rtprio limit in " +
			remedy.LimitsFile + " (" + remedy.LimitsRTPrio + ", and the user in group " + remedy.Group + "), or run as root; in a container add " +
			"--cap-add SYS_NICE --ulimit rtprio=99 (and --cpu-rt-runtime when RT group scheduling leaves the cgroup no RT budget)"
	}
	return "see examples/rtcheck for the machine's readiness checks"
}

func (f *linuxFlavor) Name() string                      { return f.name }
func (f *linuxFlavor) RealTime() bool                    { return f.fifo }
func (f *linuxFlavor) Now() int64                        { return sys.Nanotime() }
func (f *linuxFlavor) Priorities() (lowest, highest int) { return prioLowest, f.highest }
func (f *linuxFlavor) MinPeriod() time.Duration          { return MinPeriod }

func (f *linuxFlavor) Traits() Traits { return Traits{OSThreads: true} }

func (f *linuxFlavor) Enter() (func(), error) { return func() {}, nil }

func (f *linuxFlavor) Bind(spec ThreadSpec) (Waker, Binding, error) {
	b := Binding{Tid: sys.Gettid(), Policy: sys.SchedOther, Degraded: f.degraded}
	if spec.CPUs != nil {
		if err := sys.SetAffinity(0, spec.CPUs); err != nil {
			return nil, b, fmt.Errorf("pin to CPUs %v: %w", spec.CPUs, err)
		}
		b.CPUs = slices.Clone(spec.CPUs) // the binding's own: the caller keeps spec
	}
	if f.fifo {
		err := sys.SetScheduler(0, sys.SchedFIFO, spec.Priority)
		switch {
		case err == nil:
			b.Policy, b.Priority = sys.SchedFIFO, spec.Priority
		case f.mustFIFO:
			if errors.Is(err, unix.EPERM) {
				err = fmt.Errorf("%w: %w", ErrPermission, err)
			}
			return nil, b, fmt.Errorf("set SCHED_FIFO %d on tid %d: %w (%s)", spec.Priority, b.Tid, err, fifoRemedy(err))
		default:
			b.Degraded = fmt.Sprintf("SCHED_FIFO refused on tid %d (%v): running SCHED_OTHER", b.Tid, err)
			if f.warnedFIFO.CompareAndSwap(false, true) {
				f.log.Warn(b.Degraded, zap.String("task", spec.Name), zap.String("remedy", fifoRemedy(err)))
			}
		}
	}
	wake, err := ResolveWake(spec.Wake, f.defaultWake)
	if err != nil {
		return nil, b, err
	}
	if spec.Period == 0 {
		wake = WakeNanosleep // nothing periodic to program
	}
	w, err := newWaker(wake, f.timerSignal, spec.Control)
	if err != nil {
		return nil, b, err
	}
	b.Wake = wake
	return w, b, nil
}

func (f *linuxFlavor) Close() error {
	f.hardening.release()
	f.hardening = nil
	return nil
}
