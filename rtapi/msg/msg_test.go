//go:build linux

package msg

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

var testInstance = func() int {
	if v := os.Getenv("RTLOG_INSTANCE"); v != "" {
		n, _ := strconv.Atoi(v)
		return n
	}
	return 300000 + os.Getpid()
}()

func TestMain(m *testing.M) {
	switch rttest.ChildRole() {
	case "":
	case "hostile":
		os.Exit(childHostile())
	case "truncate":
		os.Exit(childTruncate())
	default:
		os.Exit(childWriter())
	}
	code := m.Run()
	if rttest.CleanShm(shm.DefaultDir, testInstance) != 0 {
		code = 1
	}
	os.Exit(code)
}

func observed(level zapcore.Level) (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(level)
	return zap.New(core), logs
}

func TestLoggerToZap(t *testing.T) {
	sink := NewSink(LevelAll)
	log, err := sink.Logger("servo", 0)
	require.NoError(t, err)
	before := time.Now()
	log.Err("overrun %d late by %.1f us", Int(3), Float(12.5))
	log.Warn("flag %v count %d", Bool(true), Uint(uint8(7)))
	log.Info("plain")
	log.Dbg("dbg %x", Int(time.Duration(255)))
	zl, logs := observed(zapcore.DebugLevel)
	assert.Equal(t, 4, sink.DrainOnce(zl))
	all := logs.All()
	require.Len(t, all, 4)
	want := []struct {
		lvl zapcore.Level
		msg string
	}{
		{zapcore.ErrorLevel, "overrun 3 late by 12.5 us"},
		{zapcore.WarnLevel, "flag true count 7"},
		{zapcore.InfoLevel, "plain"},
		{zapcore.DebugLevel, "dbg ff"},
	}
	for i, w := range want {
		assert.Equal(t, w.lvl, all[i].Level)
		assert.Equal(t, w.msg, all[i].Message)
		assert.Equal(t, "servo", all[i].ContextMap()["task"])
		assert.False(t, all[i].Time.Before(before.Truncate(time.Microsecond)), "entry time is the RT call's time")
		assert.True(t, all[i].Time.Before(time.Now()))
	}
	assert.Zero(t, log.Dropped())
}

// zap reports the task body's call site as the caller of an RT message,
// not the drainer's line; a ring of another process gives no caller.
func TestCallerIsTheCallSite(t *testing.T) {
	sink := NewSink(LevelAll)
	log, err := sink.Logger("servo", 0)
	require.NoError(t, err)
	_, file, line, _ := runtime.Caller(0)
	log.Warn("warned") // line+1
	log.Print(LevelInfo, "printed")
	core, logs := observer.New(zapcore.DebugLevel)
	require.Equal(t, 2, sink.DrainOnce(zap.New(core, zap.AddCaller())))
	all := logs.TakeAll()
	for i, e := range all {
		require.True(t, e.Caller.Defined, e.Message)
		assert.Equal(t, file, e.Caller.File, e.Message)
		assert.Equal(t, line+1+i, e.Caller.Line, e.Message)
		assert.True(t, strings.HasSuffix(e.Caller.Function, "TestCallerIsTheCallSite"), e.Caller.Function)
	}

	// A logger that asks for no caller gets none, and from then on the
	// Loggers stop paying for the call site.
	log.Info("no caller wanted")
	require.Equal(t, 1, sink.DrainOnce(zap.New(core)))
	assert.False(t, logs.TakeAll()[0].Caller.Defined)
	assert.False(t, sink.callers.Load(), "the Loggers still record call sites nobody shows")
	log.Info("recorded without its call site")
	p, err := log.ring.Peek()
	require.NoError(t, err)
	m, err := Decode(p)
	require.NoError(t, err)
	assert.Zero(t, m.PC)
	require.Equal(t, 1, sink.DrainOnce(zap.New(core)))
	logs.TakeAll()

	// A ring another process writes: its program counters mean nothing
	// here, and the drainer's own line would mislead.
	words := make([]uint64, ipc.RingSize(4096)/8)
	ring, err := ipc.InitRecordRing(unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8))
	require.NoError(t, err)
	remote, err := NewLogger(ring, "remote")
	require.NoError(t, err)
	remote.Warn("from afar")
	require.NoError(t, sink.AddRing(ring, "remote"))
	require.Equal(t, 1, sink.DrainOnce(zap.New(core, zap.AddCaller())))
	assert.False(t, logs.TakeAll()[0].Caller.Defined)
}

func TestLevelsFilter(t *testing.T) {
	sink := NewSink(LevelWarn)
	log, err := sink.Logger("t", 0)
	require.NoError(t, err)
	assert.Equal(t, LevelWarn, log.Level())
	log.Err("e")
	log.Warn("w")
	log.Info("i")
	log.Dbg("d")
	log.Print(LevelNone, "none")
	log.Print(LevelAll, "all")
	log.Print(Level(-3), "bad")
	zl, logs := observed(zapcore.DebugLevel)
	sink.DrainOnce(zl)
	assert.Equal(t, 2, logs.Len())
	sink.SetLevel(LevelNone)
	assert.Equal(t, LevelNone, sink.Level())
	log.Err("nothing passes")
	assert.Zero(t, sink.DrainOnce(zl))
	assert.Zero(t, log.Dropped(), "filtered messages are not drops")

	for l, s := range map[Level]string{LevelNone: "NONE", LevelErr: "ERR", LevelWarn: "WARN", LevelInfo: "INFO", LevelDbg: "DBG", LevelAll: "ALL", 17: "Level(17)", -2: "Level(-2)"} {
		assert.Equal(t, s, l.String())
	}
}

func TestZapLevelFilterStillConsumes(t *testing.T) {
	sink := NewSink(LevelAll)
	log, _ := sink.Logger("t", 0)
	log.Dbg("hidden by zap")
	zl, logs := observed(zapcore.InfoLevel)
	assert.Equal(t, 1, sink.DrainOnce(zl))
	assert.Zero(t, logs.Len())
	assert.Zero(t, sink.DrainOnce(zl))
}

func TestDropsCountedAndReported(t *testing.T) {
	sink := NewSink(LevelAll)
	log, err := sink.Logger("busy", 1) // smallest ring
	require.NoError(t, err)
	sent := 0
	for log.Dropped() == 0 {
		log.Info("fill %d", Int(sent))
		sent++
	}
	log.Info("dropped too")
	zl, logs := observed(zapcore.DebugLevel)
	got := sink.DrainOnce(zl)
	assert.Equal(t, sent-1, got)
	drops := logs.FilterMessage("msg: messages dropped").All()
	require.Len(t, drops, 1)
	assert.Equal(t, uint64(2), drops[0].ContextMap()["dropped"])
	assert.Equal(t, "busy", drops[0].ContextMap()["task"])
	log.Info("room again")
	assert.Equal(t, 1, sink.DrainOnce(zl))
	assert.Len(t, logs.FilterMessage("msg: messages dropped").All(), 1, "drops are reported once")
}

func TestLimits(t *testing.T) {
	sink := NewSink(LevelAll)
	log, _ := sink.Logger(strings.Repeat("n", 40), 0)
	assert.Len(t, log.Task(), MaxTask)
	log.Info("%d %d %d %d %d %d", Int(1), Int(2), Int(3), Int(4), Int(5), Int(6), Int(7))
	log.Info(strings.Repeat("x", MaxFormat+10))
	zl, logs := observed(zapcore.DebugLevel)
	sink.DrainOnce(zl)
	all := logs.All()
	require.Len(t, all, 2)
	assert.Equal(t, "1 2 3 4 5 6 [arguments dropped]", all[0].Message)
	assert.Equal(t, strings.Repeat("x", MaxFormat)+" [format cut]", all[1].Message)
}

func TestConcurrentUseDropsNeverCorrupts(t *testing.T) {
	sink := NewSink(LevelAll)
	log, _ := sink.Logger("shared", 1<<20)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				log.Info("g %d i %d", Int(g), Int(i))
			}
		}()
	}
	wg.Wait()
	zl, logs := observed(zapcore.DebugLevel)
	n := sink.DrainOnce(zl)
	assert.Equal(t, uint64(8000), uint64(n)+log.Dropped())
	for _, e := range logs.FilterMessageSnippet("g ").All() {
		var g, i int
		_, err := fmt.Sscanf(e.Message, "g %d i %d", &g, &i)
		require.NoError(t, err, e.Message)
	}
}

func TestNilAndMisuse(t *testing.T) {
	var log *Logger
	log.Err("nothing")
	log.Print(LevelInfo, "nothing")
	assert.Zero(t, log.Dropped())
	_, err := NewLogger(nil, "x")
	assert.ErrorIs(t, err, ErrInvalid)
	small, err := ipc.InitRecordRing(make([]byte, ipc.RingSize(64)))
	require.NoError(t, err)
	_, err = NewLogger(small, "x")
	assert.ErrorIs(t, err, ErrInvalid)
	sink := NewSink(LevelInfo)
	_, err = sink.Logger("x", -1)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorIs(t, sink.AddRing(nil, "x"), ErrInvalid)
	assert.ErrorIs(t, sink.Drain(context.Background(), nil), ErrInvalid)
	_, err = Decode([]byte{1, 2})
	assert.Error(t, err)
	_, err = Decode(make([]byte, 40))
	assert.Error(t, err)
}

func TestDrainLoop(t *testing.T) {
	sink := NewSink(LevelAll)
	log, _ := sink.Logger("loop", 0)
	zl, logs := observed(zapcore.DebugLevel)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sink.Drain(ctx, zl) }()
	log.Info("first %d", Int(1))
	require.Eventually(t, func() bool { return logs.Len() == 1 }, 5*time.Second, time.Millisecond,
		"the drainer is woken by the Logger")
	assert.ErrorIs(t, sink.Drain(ctx, zl), ErrInvalid, "one Drain at a time")
	log.Info("second")
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, 2, logs.Len(), "what was logged before Stop is drained")
}

func TestAllocs(t *testing.T) {
	sink := NewSink(LevelAll)
	log, _ := sink.Logger("alloc", 1<<20)
	x := 3
	f := 2.5
	allocs := testing.AllocsPerRun(1000, func() {
		log.Err("overrun %d at %f", Int(x), Float(f))
		log.Info("nothing")
		log.Dbg("%d %d %d %d %d %d", Int(1), Int(2), Int(3), Int(4), Int(5), Int(x))
	})
	assert.Zero(t, allocs)
	full, _ := sink.Logger("full", 1)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { full.Warn("drop %d", Int(x)) }))
}

func BenchmarkPrint(b *testing.B) {
	sink := NewSink(LevelAll)
	log, _ := sink.Logger("bench", 1<<20)
	zl := zap.NewNop()
	i := 0
	for b.Loop() {
		log.Info("cycle %d took %f", Int(i), Float(1.5))
		i++
		if i%1000 == 0 {
			b.StopTimer() // measure the RT side only
			sink.DrainOnce(zl)
			b.StartTimer()
		}
	}
}

// BenchmarkPrintWithCaller is Print for a Sink drained into a zap logger
// that reports callers: each message records its call site.
func BenchmarkPrintWithCaller(b *testing.B) {
	sink := NewSink(LevelAll)
	log, _ := sink.Logger("bench", 1<<20)
	zl := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.DebugLevel), zap.AddCaller())
	sink.DrainOnce(zl)
	i := 0
	for b.Loop() {
		log.Info("cycle %d took %f", Int(i), Float(1.5))
		i++
		if i%1000 == 0 {
			b.StopTimer() // measure the RT side only
			sink.DrainOnce(zl)
			b.StartTimer()
		}
	}
}

// childWriter logs into a ring that lives in a shared segment.
func childWriter() int {
	seg, err := shm.Attach(shm.Options{Instance: testInstance}, 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer seg.Close()
	ring, err := ipc.OpenRecordRing(seg.Bytes())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	log, _ := NewLogger(ring, "remote")
	for i := range 100 {
		log.Warn("remote %d", Int(i))
	}
	return 0
}

func TestCrossProcessDrain(t *testing.T) {
	rttest.RequireSelfExec(t)
	seg, err := shm.Create(shm.Options{Instance: testInstance}, 1, ipc.RingSize(64<<10))
	require.NoError(t, err)
	defer seg.Delete()
	ring, err := ipc.InitRecordRing(seg.Bytes())
	require.NoError(t, err)
	cmd := rttest.Child("writer")
	cmd.Env = append(cmd.Env, "RTLOG_INSTANCE="+strconv.Itoa(testInstance))
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Run())
	sink := NewSink(LevelAll)
	require.NoError(t, sink.AddRing(ring, "remote"))
	zl, logs := observed(zapcore.DebugLevel)
	assert.Equal(t, 100, sink.DrainOnce(zl))
	all := logs.All()
	require.Len(t, all, 100)
	assert.Equal(t, "remote 99", all[99].Message)
	assert.Equal(t, zapcore.WarnLevel, all[99].Level)
	assert.Equal(t, "remote", all[99].ContextMap()["task"])
	sink.RemoveRing(ring)
	sink.RemoveRing(ring) // unknown: no-op
	assert.Zero(t, sink.DrainOnce(zl))
}

// FuzzDecode: a malformed record (a scribbled shared ring) is an error,
// never a panic.
func FuzzDecode(f *testing.F) {
	sink := NewSink(LevelAll)
	log, _ := sink.Logger("fuzz", 0)
	log.Warn("seed %d %f %v", Int(1), Float(2.0), Bool(true))
	p, _ := log.ring.Peek()
	f.Add(append([]byte(nil), p...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err == nil {
			_ = m.Text()
		}
	})
}

// BenchmarkDrain is the non-RT side: decode, format and hand one message to
// a no-op zap core.
func BenchmarkDrain(b *testing.B) {
	sink := NewSink(LevelAll)
	log, _ := sink.Logger("bench", 1<<20)
	zl := zap.NewNop()
	i := 0
	for b.Loop() {
		log.Info("cycle %d took %f", Int(i), Float(1.5))
		i++
		sink.DrainOnce(zl)
	}
}

// With zap.NewDevelopment's options (stacks from WARN, callers on), a
// drained message shows the task's call site and no stack: the stack
// zap would take is the drainer's (msg.(*Sink).drainSource), not the
// task's.
func TestDrainedMessagesCarryNoDrainerStack(t *testing.T) {
	sink := NewSink(LevelAll)
	log, err := sink.Logger("servo", 0)
	require.NoError(t, err)
	_, file, line, _ := runtime.Caller(0)
	log.Err("overrun %d", Int(3)) // line+1
	log.Warn("late")
	core, logs := observer.New(zapcore.DebugLevel)
	zl := zap.New(core, zap.Development(), zap.AddCaller(), zap.AddStacktrace(zapcore.WarnLevel))
	require.Equal(t, 2, sink.DrainOnce(zl))
	all := logs.TakeAll()
	require.Len(t, all, 2)
	for _, e := range all {
		assert.Empty(t, e.Stack, "%s: a stack of the drainer", e.Message)
		assert.Equal(t, file, e.Caller.File, e.Message)
	}
	assert.Equal(t, line+1, all[0].Caller.Line)

	// The Sink's own reports are not task messages: they keep zap's stack.
	zl.Error("host error")
	assert.NotEmpty(t, logs.TakeAll()[0].Stack)
}
