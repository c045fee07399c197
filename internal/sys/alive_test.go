package sys_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

// ProcessAlive finds this process and init, and no process at pid 0, a
// negative pid or a child that was reaped.
func TestProcessAlive(t *testing.T) {
	t.Parallel()
	require.True(t, sys.ProcessAlive(os.Getpid()))
	require.True(t, sys.ProcessAlive(1), "init runs under another user: EPERM still means alive")
	require.False(t, sys.ProcessAlive(0))
	require.False(t, sys.ProcessAlive(-1))
	rttest.SkipIfEmulated(t, rttest.ForkUnderEmulator)
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	require.False(t, sys.ProcessAlive(cmd.Process.Pid))
}
