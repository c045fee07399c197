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
	acc0, cpus, at0, err := c.Read()
	require.NoError(t, err)
	require.Equal(t, onlineCPUs(t), cpus)
	time.Sleep(20 * time.Millisecond)
	acc1, cpus1, at1, err := c.Read()
	require.NoError(t, err)
	require.Equal(t, cpus, cpus1)
	require.GreaterOrEqual(t, acc1, acc0)
	require.Greater(t, at1, at0)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	acc2, _, _, err := c.Read()
	require.NoError(t, err)
	require.GreaterOrEqual(t, acc2, acc1)
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
