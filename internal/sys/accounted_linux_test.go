package sys_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/sys"
)

// This machine's /proc/stat: every online CPU listed, the accounted time
// never going back, the read's time moving on; Close and read again.
func TestCPUAccountsReadsThisMachine(t *testing.T) {
	c := sys.NewCPUAccounts()
	a0, at0, err := c.Read(nil)
	require.NoError(t, err)
	require.Len(t, a0, onlineCPUs(t))
	time.Sleep(20 * time.Millisecond)
	a1, at1, err := c.Read(make([]sys.CPUAccount, 0, len(a0)))
	require.NoError(t, err)
	require.Len(t, a1, len(a0))
	for i := range a1 {
		require.Equal(t, a0[i].CPU, a1[i].CPU)
		require.GreaterOrEqual(t, a1[i].Total, a0[i].Total)
		require.GreaterOrEqual(t, a1[i].Idle, a0[i].Idle)
	}
	require.Greater(t, at1, at0)
	require.Zero(t, testing.AllocsPerRun(10, func() { a1, _, _ = c.Read(a1) }), "a Read into a slice with room")
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	a2, _, err := c.Read(nil)
	require.NoError(t, err)
	require.Len(t, a2, len(a0))
	require.NoError(t, c.Close())
}

// onlineCPUs counts /sys/devices/system/cpu/online ("0-3,5").
func onlineCPUs(t *testing.T) int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	require.NoError(t, err)
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, ok := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		require.NoError(t, err)
		z := a
		if ok {
			z, err = strconv.Atoi(hi)
			require.NoError(t, err)
		}
		n += z - a + 1
	}
	return n
}
