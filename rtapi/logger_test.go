package rtapi_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
)

// With Options.Logger nil, rtapi's warnings and errors reach stderr (a
// warning changes what the program does: a sim clock that never moved,
// SCHED_FIFO refused, no P of its own); zap.NewNop() silences them (issue
// 21: they went nowhere). The child opens sim, starts a task, never
// advances the clock and closes: a warning says no task ran.
func TestNilLoggerShowsWarnings(t *testing.T) {
	if role := rttest.ChildRole(); role == "nil-logger" || role == "nop-logger" {
		o := rtapi.Options{Flavor: "sim"}
		if role == "nop-logger" {
			o.Logger = zap.NewNop()
		}
		rt, err := rtapi.Open(o)
		require.NoError(t, err)
		task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, loop)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		require.NoError(t, rt.Close())
		return
	}
	rttest.ParallelUnlessRT(t)
	rttest.RequireSelfExec(t)
	rt := open(t, rtapi.Options{Flavor: "posix"})
	require.True(t, rt.Logger().Core().Enabled(zapcore.WarnLevel))
	require.False(t, rt.Logger().Core().Enabled(zapcore.InfoLevel), "quiet unless something is wrong")

	cmd := rttest.Child("nil-logger", "-test.run=^TestNilLoggerShowsWarnings$")
	cmd.Env = append(cmd.Env, "RTAPI_FLAVOR=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "virtual clock never advanced")

	cmd = rttest.Child("nop-logger", "-test.run=^TestNilLoggerShowsWarnings$")
	cmd.Env = append(cmd.Env, "RTAPI_FLAVOR=")
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NotContains(t, string(out), "virtual clock never advanced")
}
