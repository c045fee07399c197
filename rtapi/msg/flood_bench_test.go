//go:build linux

package msg

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/gortapi/gortapi/rtapi/ipc"
)

// hostileFormat is the format of issue 20 item 1: an index with no closing
// ']' followed by huge widths, cut to MaxFormat.
var hostileFormat = ("%[d" + strings.Repeat("%999999d", 40))[:MaxFormat]

// foreignRing is a ring in process memory added to sink as another
// process's ring would be, with a Logger writing into it.
func foreignRing(b testing.TB, sink *Sink, capacity int) *Logger {
	mem := make([]uint64, ipc.RingSize(capacity)/8)
	ring, err := ipc.InitRecordRing(unsafe.Slice((*byte)(unsafe.Pointer(&mem[0])), len(mem)*8))
	if err != nil {
		b.Fatal(err)
	}
	if err := sink.AddRing(ring, "peer"); err != nil {
		b.Fatal(err)
	}
	l, err := NewLogger(ring, "peer")
	if err != nil {
		b.Fatal(err)
	}
	l.SetLevel(LevelAll)
	return l
}

// BenchmarkDrainHostileFormat is the drainer's cost per message of a peer
// sending hostileFormat into a zap logger that discards everything
// (zap.NewNop), as rtapi's default logger does.
func BenchmarkDrainHostileFormat(b *testing.B) {
	sink := NewSink(LevelAll)
	l := foreignRing(b, sink, 1<<20)
	zl := zap.NewNop()
	b.ReportAllocs()
	for b.Loop() {
		l.Info(hostileFormat, Int(1), Int(2), Int(3))
		sink.DrainOnce(zl)
	}
}

// BenchmarkFloodLines reports the log lines a second that reach the log
// while a peer writes valid messages into its ring as fast as it can and
// the drainer runs as in a host.
func BenchmarkFloodLines(b *testing.B) {
	for b.Loop() {
		sink := NewSink(LevelAll)
		l := foreignRing(b, sink, 64<<10)
		var lines atomic.Int64
		zl := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()),
			zapcore.AddSync(countWriter{&lines}), zapcore.DebugLevel))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = sink.Drain(ctx, zl) }()
		var stop atomic.Bool
		go func() {
			for i := 0; !stop.Load(); i++ {
				l.Warn("valid message %d", Int(i))
			}
		}()
		const window = time.Second
		time.Sleep(window)
		stop.Store(true)
		n := lines.Load()
		cancel()
		<-done
		b.ReportMetric(float64(n)/window.Seconds(), "lines/s")
	}
}

type countWriter struct{ n *atomic.Int64 }

func (w countWriter) Write(p []byte) (int, error) { w.n.Add(1); return len(p), nil }
