//go:build linux

package backend

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gortapi/gortapi/kerneldetect"
)

// probeUpTo stands for RLIMIT_RTPRIO = limit without CAP_SYS_NICE: the
// kernel refuses SCHED_FIFO above the limit. It records what was probed.
func probeUpTo(limit int, probed *[]int) func(int) error {
	return func(prio int) error {
		*probed = append(*probed, prio)
		if prio > limit {
			return &os_SyscallError{}
		}
		return nil
	}
}

// The probe asks for the priority that will be used (the watchdog's, one
// above prioHighest), not the lowest; under a lower rtprio limit the task
// priorities are capped below it and the why says so. (The real-process
// version, a child under RLIMIT_RTPRIO 50, is rtapi's TestRTPrioLimit.)
func TestSelectUnderRTPrioLimit(t *testing.T) {
	for _, tc := range []struct {
		limit, highest int
		says           string
	}{
		{99, prioHighest, ""},
		{50, 49, "allowed up to priority 50 only"},
		{98, 97, "the watchdog at 98 above them"},
		{2, 1, "task priorities 1 to 1, the watchdog at 2"},
		{1, 1, "the watchdog cannot run above them"},
	} {
		for _, fifo := range []bool{false, true} {
			var probed []int
			kind := kerneldetect.PreemptRT
			if fifo {
				kind = kerneldetect.Vanilla
			}
			c, err := Select("auto", Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: report(kind), VanillaFIFO: fifo, Strict: true,
				Probe: probeUpTo(tc.limit, &probed), LockMemory: LockNever})
			require.NoError(t, err, "limit %d", tc.limit)
			require.True(t, c.Flavor.RealTime())
			lo, hi := c.Flavor.Priorities()
			require.Equal(t, prioLowest, lo)
			require.Equal(t, tc.highest, hi, "limit %d: %s", tc.limit, c.Why)
			require.Equal(t, prioHighest+1, probed[0], "the first probe is at the priority used")
			if tc.says == "" {
				require.NotContains(t, c.Why, "allowed up to")
			} else {
				require.Contains(t, c.Why, tc.says)
				require.Contains(t, c.Why, "rtprio 99")
			}
			require.LessOrEqual(t, len(probed), 9, "bisection, not a scan: %v", probed)
			require.NoError(t, c.Flavor.Close())
		}
	}
}
