//go:build linux

package backend

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
)

// VanillaFIFO where SCHED_FIFO is refused runs SCHED_OTHER threads, and
// each thread's Binding says so in Degraded, as the docs promise (issue
// 21: Start returned nil with Degraded empty).
func TestVanillaFIFORefusedBindsDegraded(t *testing.T) {
	rttest.SkipIfEmulated(t, "qemu-user does not deliver a POSIX timer's signal to one thread, so Wait never returns")
	c, err := Select(PosixName, Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: report(kerneldetect.Vanilla), VanillaFIFO: true, Probe: probeEPERM,
		LockMemory: LockNever})
	require.NoError(t, err)
	defer c.Flavor.Close()
	require.False(t, c.Flavor.RealTime())
	b, policy, _, err := bindOnThread(t, c.Flavor, ThreadSpec{Name: "t", Priority: 10, Period: int64(time.Millisecond)})
	require.NoError(t, err)
	require.Equal(t, sys.SchedOther, policy)
	require.Contains(t, b.Degraded, "SCHED_FIFO")
}

// Binds that fall back to SCHED_OTHER at once, on many threads, warn once
// and race on nothing (run with -race; issue 21's unconfirmed
// linuxFlavor.warnedFIFO). Priority 200 is refused by any kernel (EINVAL).
func TestConcurrentDegradedBindsWarnOnce(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	f := &linuxFlavor{name: PosixName, fifo: true, highest: prioHighest, defaultWake: WakeNanosleep,
		log: zap.New(core), timerSignal: DefaultTimerSignal}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			b, _, _, err := bindOnThread(t, f, ThreadSpec{Name: "t", Priority: 200})
			require.NoError(t, err)
			require.Contains(t, b.Degraded, "SCHED_FIFO refused")
		})
	}
	wg.Wait()
	require.Equal(t, 1, logs.Len(), "%v", logs.All())
}
