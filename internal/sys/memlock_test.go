package sys_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/sys"
)

func TestParseVmLck(t *testing.T) {
	n, err := sys.ParseVmLck([]byte("Name:\tx\nVmPeak:\t  1000 kB\nVmLck:\t     128 kB\nVmPin:\t0 kB\n"))
	require.NoError(t, err)
	require.EqualValues(t, 128<<10, n)
	n, err = sys.ParseVmLck([]byte("VmLck:\t       0 kB\n"))
	require.NoError(t, err)
	require.Zero(t, n)
	for _, bad := range []string{"", "Name:\tx\n", "VmLck:\t-5 kB\n", "VmLck:\t12 MB\n", "VmLck:\tlots kB\n",
		"VmLck:\t99999999999999999999 kB\n"} {
		_, err := sys.ParseVmLck([]byte(bad))
		require.Error(t, err, "%q", bad)
	}
}
