package rtapi

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/msg"
)

func openObserved(t *testing.T) (*RT, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	rt, err := Open(Options{Flavor: "posix", Instance: 500000 + os.Getpid(), Logger: zap.New(core)})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, rt.closeMessages())
		require.NoError(t, rt.Close())
	})
	return rt, logs
}

func TestMsgLoggerDrainsIntoZap(t *testing.T) {
	rt, logs := openObserved(t)
	log, err := rt.MsgLogger("servo")
	require.NoError(t, err)
	assert.Equal(t, msg.LevelInfo, rt.MsgLevel())
	log.Err("following error %.2f at cycle %d", msg.Float(0.25), msg.Int(17))
	log.Dbg("hidden at INFO")
	require.NoError(t, rt.SetMsgLevel(msg.LevelDbg))
	log.Dbg("shown at DBG %v", msg.Bool(true))
	require.Eventually(t, func() bool {
		return logs.FilterField(zap.String("task", "servo")).Len() == 2
	}, 5*time.Second, time.Millisecond)
	got := logs.FilterField(zap.String("task", "servo")).All()
	assert.Equal(t, zapcore.ErrorLevel, got[0].Level)
	assert.Equal(t, "following error 0.25 at cycle 17", got[0].Message)
	assert.Equal(t, zapcore.DebugLevel, got[1].Level)
	assert.Equal(t, "shown at DBG true", got[1].Message)
	assert.ErrorIs(t, rt.SetMsgLevel(msg.Level(9)), ErrInvalid)

	log.Warn("flushed at close %d", msg.Uint(uint(3)))
	require.NoError(t, rt.closeMessages())
	assert.Equal(t, 1, logs.FilterMessage("flushed at close 3").Len())
}

func TestMsgLoggerAllocs(t *testing.T) {
	rt, _ := openObserved(t)
	log, err := rt.MsgLogger("alloc")
	require.NoError(t, err)
	// AllocsPerRun counts every goroutine: stop the drainer (which formats
	// and allocates by design) so only the RT-side call is measured.
	require.NoError(t, rt.closeMessages())
	n := 0
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		n++
		log.Info("cycle %d", msg.Int(n))
	}))
}

func TestShmMsgAcrossSegments(t *testing.T) {
	rt, logs := openObserved(t)
	size := ipc.RingSize(64 << 10)
	seg, err := rt.ShmNew(0x77, size)
	require.NoError(t, err)
	defer seg.Delete()
	writer, err := rt.ShmMsgLogger(seg, 0, size, "remote")
	require.NoError(t, err)
	other, err := rt.ShmAttach(0x77)
	require.NoError(t, err)
	defer other.Close()
	stop, err := rt.DrainShmMessages(other, 0, size, "remote")
	require.NoError(t, err)
	defer stop()
	writer.Warn("from the segment %d", msg.Int(1))
	require.Eventually(t, func() bool {
		return logs.FilterMessage("from the segment 1").Len() == 1
	}, 5*time.Second, time.Millisecond)
	_, err = rt.ShmMsgLogger(seg, 0, ipc.RingSize(64), "tiny")
	assert.ErrorIs(t, err, ErrInvalid)
}
