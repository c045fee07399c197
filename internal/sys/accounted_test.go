package sys_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/sys"
)

// A /proc/stat of this project's 2-CPU Firecracker VM: the two CPU lines
// summed (USER_HZ 100), the total line and the rest not.
func TestParseCPUAccountsReadsTheCPULines(t *testing.T) {
	b, err := os.ReadFile("testdata/procstat/firecracker-2cpu.txt")
	require.NoError(t, err)
	acc, cpus, err := sys.ParseCPUAccounts(b)
	require.NoError(t, err)
	require.Equal(t, 2, cpus)
	want := int64(924994+15709+318746+1106816+1794+0+18977+0) + int64(957387+15820+361996+1032940+4722+0+15459+0)
	require.Equal(t, want, acc)

	// Older kernels write fewer columns after steal; guest time is in
	// user already and not added.
	acc, cpus, err = sys.ParseCPUAccounts([]byte("cpu  3 0 0 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8\ncpu7 1 0 0 0 0 0 0 0 99 99\nintr 5\n"))
	require.NoError(t, err)
	require.Equal(t, [2]int64{37, 2}, [2]int64{acc, int64(cpus)})
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
		"a tab":            "cpu0\t1 2 3 4 5 6 7 8\n",
		"too many CPUs":    strings.Repeat("cpu0 1 2 3 4 5 6 7 8\n", 1<<20+1),
	} {
		_, _, err := sys.ParseCPUAccounts([]byte(in))
		require.ErrorIs(t, err, sys.ErrProcStat, name)
	}
}

func FuzzParseCPUAccounts(f *testing.F) {
	b, err := os.ReadFile("testdata/procstat/firecracker-2cpu.txt")
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte("cpu0 1 2 3 4 5 6 7 8\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		acc, cpus, err := sys.ParseCPUAccounts(b)
		if err != nil {
			require.ErrorIs(t, err, sys.ErrProcStat)
			return
		}
		require.Positive(t, cpus)
		require.GreaterOrEqual(t, acc, int64(0))
	})
}
