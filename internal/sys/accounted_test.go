package sys_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/sys"
)

// A /proc/stat of this project's 2-CPU Firecracker VM: each CPU line
// summed (USER_HZ 100) with its idle and iowait, the total line and the
// rest not read.
func TestParseCPUAccountsReadsTheCPULines(t *testing.T) {
	b, err := os.ReadFile("testdata/procstat/firecracker-2cpu.txt")
	require.NoError(t, err)
	accts, err := sys.ParseCPUAccounts(b, nil)
	require.NoError(t, err)
	require.Equal(t, []sys.CPUAccount{
		{CPU: 0, Total: 924994 + 15709 + 318746 + 1106816 + 1794 + 0 + 18977 + 0, Idle: 1106816 + 1794},
		{CPU: 1, Total: 957387 + 15820 + 361996 + 1032940 + 4722 + 0 + 15459 + 0, Idle: 1032940 + 4722},
	}, accts)

	// Older kernels write fewer columns after steal; guest time is in
	// user already and not added. CPUs may be missing (offline).
	accts, err = sys.ParseCPUAccounts([]byte("cpu  3 0 0 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8\ncpu7 1 0 0 0 0 0 0 0 99 99\nintr 5\n"), accts[:0])
	require.NoError(t, err)
	require.Equal(t, []sys.CPUAccount{{CPU: 0, Total: 36, Idle: 9}, {CPU: 7, Total: 1}}, accts)
}

// What is not /proc/stat as Linux writes it is ErrProcStat, naming the
// line, at a cost bounded by the input.
func TestParseCPUAccountsRefusesOthers(t *testing.T) {
	for name, in := range map[string]string{
		"empty":            "",
		"no CPU line":      "intr 1 2\nctxt 5\n",
		"only the total":   "cpu  1 2 3 4 5 6 7 8\nintr 1\n",
		"unended CPU line": "cpu0 1 2 3 4 5 6 7 8",
		"seven columns":    "cpu0 1 2 3 4 5 6 7\n",
		"a letter":         "cpu0 1 2 3 x 5 6 7 8\n",
		"a sign":           "cpu0 1 2 -3 4 5 6 7 8\n",
		"no number":        "cpux 1 2 3 4 5 6 7 8\n",
		"out of range":     "cpu0 1 2 3 4 5 6 7 " + strings.Repeat("9", 30) + "\n",
		"a huge CPU":       "cpu" + strings.Repeat("9", 30) + " 1 2 3 4 5 6 7 8\n",
		"a tab":            "cpu0\t1 2 3 4 5 6 7 8\n",
		"out of order":     "cpu1 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n",
		"twice":            "cpu0 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n",
		"too many CPUs":    strings.Repeat("cpu0 1 2 3 4 5 6 7 8\n", 1<<20+1),
	} {
		_, err := sys.ParseCPUAccounts([]byte(in), nil)
		require.ErrorIs(t, err, sys.ErrProcStat, name)
	}
}

// StoppedCPUTime counts only CPUs that did not idle: wall time less
// accounted time less StopJitter, never negative; a CPU missing from
// either read, or one that idled (its accounts lag or lead by how its
// busy time met the ticks), adds nothing.
func TestStoppedCPUTime(t *testing.T) {
	const ms = int64(1e6)
	tick := int64(sys.AccountTick)
	prev := []sys.CPUAccount{{CPU: 0, Total: 100, Idle: 10}, {CPU: 1, Total: 100, Idle: 10}, {CPU: 3, Total: 100, Idle: 10}}
	cur := []sys.CPUAccount{
		{CPU: 0, Total: 100 + 500*ms/tick - 10, Idle: 10}, // busy, 100 ms without a tick
		{CPU: 1, Total: 100 + 500*ms/tick - 30, Idle: 11}, // idled: not counted
		{CPU: 2, Total: 100, Idle: 10},                    // new
		{CPU: 3, Total: 100 + 500*ms/tick - 2, Idle: 10},  // 20 ms behind: jitter
	}
	require.Equal(t, 100*ms-sys.StopJitter, sys.StoppedCPUTime(prev, cur, 0, 500*ms))
	require.Zero(t, sys.StoppedCPUTime(nil, cur, 0, 500*ms))
	require.Zero(t, sys.StoppedCPUTime(prev, nil, 0, 500*ms))
}

func FuzzParseCPUAccounts(f *testing.F) {
	b, err := os.ReadFile("testdata/procstat/firecracker-2cpu.txt")
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte("cpu0 1 2 3 4 5 6 7 8\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		accts, err := sys.ParseCPUAccounts(b, nil)
		if err != nil {
			require.ErrorIs(t, err, sys.ErrProcStat)
			return
		}
		require.NotEmpty(t, accts)
		for i, a := range accts {
			require.GreaterOrEqual(t, a.Total, a.Idle)
			require.GreaterOrEqual(t, a.Idle, int64(0))
			if i > 0 {
				require.Greater(t, a.CPU, accts[i-1].CPU)
			}
		}
	})
}
