package hal

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
)

// A zero Options.StopTimeout is the RT's, resolved once by rtapi.Open: a
// HAL on an RT opened with -rtapi.stop-timeout or RTAPI_STOP_TIMEOUT
// waited out rtapi.DefaultStopTimeout (2 s) instead.
func TestStopTimeoutIsTheRTs(t *testing.T) {
	t.Parallel()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off, StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	defer rt.Close()
	require.Equal(t, 5*time.Second, rt.StopTimeout())
	h, err := New(rt, Options{})
	require.NoError(t, err)
	defer h.Close()
	require.Equal(t, 5*time.Second, h.opts.StopTimeout)
	own, err := New(rt, Options{StopTimeout: time.Second})
	require.NoError(t, err)
	defer own.Close()
	require.Equal(t, time.Second, own.opts.StopTimeout)
}
