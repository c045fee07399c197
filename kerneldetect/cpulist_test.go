package kerneldetect

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseCPUListExported(t *testing.T) {
	t.Parallel()
	cpus, err := ParseCPUList("3,0-1,3")
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 3}, cpus)
	require.Equal(t, "0-1,3", FormatCPUList(cpus))
	cpus, err = ParseCPUList("")
	require.NoError(t, err)
	require.Nil(t, cpus)
	for _, bad := range []string{"0-20000000", "-1", "1,-2", "3-1", "x", "1,,2", "65536"} {
		_, err := ParseCPUList(bad)
		require.ErrorIs(t, err, ErrInvalid, bad)
	}
}
