package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseCyclictest(t *testing.T) {
	out := []byte(`# /dev/cpu_dma_latency set to 0us
000000 000000
000001 000010
000002 000080
000003 000009
000004 000000
# Total: 000000100
# Min Latencies: 00001
# Avg Latencies: 00002
# Max Latencies: 00150
# Histogram Overflows: 00001
# Histogram Overflow at cycle number:
# Thread 0: 00042
`)
	res, err := parseCyclictest(out)
	require.NoError(t, err)
	require.Equal(t, int64(100), res.Samples)
	require.Equal(t, 3*time.Microsecond, res.P50)
	require.Equal(t, 4*time.Microsecond, res.P99)
	require.Equal(t, 150*time.Microsecond, res.P999, "the overflowed sample is past the histogram: report the max")
	require.Equal(t, 150*time.Microsecond, res.Max)
	require.Equal(t, uint64(1), res.Overflow)

	_, err = parseCyclictest([]byte("# Total: 0\n"))
	require.Error(t, err)

	// A line that is not a bucket of cyclictest's range is skipped: a
	// negative one panicked, a huge one grew the table to its size.
	res, err = parseCyclictest([]byte("000000 000002\n-5 000003\n4294967296 000001\n"))
	require.NoError(t, err)
	require.Equal(t, int64(2), res.Samples)
}

func TestParseSizes(t *testing.T) {
	n, err := parseBytes("64MB")
	require.NoError(t, err)
	require.Equal(t, int64(64<<20), n)
	r, err := parseRate("200MB/s")
	require.NoError(t, err)
	require.Equal(t, float64(200<<20), r)
	for _, bad := range []string{"", "MB", "-1MB", "12", "1TB"} {
		_, err := parseBytes(bad)
		require.Error(t, err, bad)
	}
}

// The load's rings are sized in 64 bits: int(live) on 386 or arm made a
// -live of 2GB or more negative (or small), and every ring one node.
func TestRingSlotsLargeLive(t *testing.T) {
	live, err := parseBytes("3GB")
	require.NoError(t, err)
	require.Equal(t, int64(3<<30/4/1024), int64(ringSlots(live, 4)))
	require.Equal(t, int64(1), int64(ringSlots(0, 4)))
}

func TestMatrixNamesAndFilter(t *testing.T) {
	rows := matrix()
	seen := map[string]bool{}
	for _, r := range rows {
		require.False(t, seen[r.Name], "duplicate row %q", r.Name)
		seen[r.Name] = true
	}
	require.True(t, seen["cyclictest quiet"], "the ratios need the quiet cyclictest row")
	got := filter(rows, regexp.MustCompile(`^defaults`))
	require.NotEmpty(t, got)
	for _, r := range got {
		require.True(t, strings.HasPrefix(r.Name, "defaults"))
	}
}

func TestTableRatios(t *testing.T) {
	var b bytes.Buffer
	printTable(&b, []result{
		{Row: row{Name: "cyclictest quiet", Cyclic: true}, Samples: 10, P99: 100 * time.Microsecond, P999: 200 * time.Microsecond},
		{Row: row{Name: "gortapi +alloc", Load: true}, Samples: 10, P99: 250 * time.Microsecond, P999: 200 * time.Microsecond},
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 4)
	require.Contains(t, lines[3], "| 2.50 | 1.00 |")
}
