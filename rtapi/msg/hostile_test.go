//go:build linux

package msg

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// corruptNextLength overwrites the length field of the next record in the
// Logger's ring, as another process writing the segment could.
func corruptNextLength(t *testing.T, l *Logger, n uint32) {
	t.Helper()
	p, err := l.ring.Peek()
	require.NoError(t, err)
	*(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(p)), -8)) = n
}

// One record with an impossible length used to be re-read on every pass,
// logging one error (with a stack trace) per pass, ~110,000 a second.
func TestDrainCorruptRecordIsSkippedNotReread(t *testing.T) {
	sink := NewSink(LevelAll)
	log, err := sink.Logger("servo", 0)
	require.NoError(t, err)
	log.Info("one")
	log.Info("two")
	corruptNextLength(t, log, 0xFFFFFFFF)
	zl, logs := observed(zapcore.DebugLevel)
	for range 100 {
		sink.DrainOnce(zl)
	}
	assert.LessOrEqual(t, logs.Len(), 2, "a damaged ring is reported once, not on every pass")
}

// Drain must sleep, not spin, while a ring stays damaged.
func TestDrainBacksOffOnDamage(t *testing.T) {
	sink := NewSink(LevelAll)
	log, err := sink.Logger("servo", 0)
	require.NoError(t, err)
	log.Info("one")
	corruptNextLength(t, log, 0xFFFFFFFF)
	zl, logs := observed(zapcore.DebugLevel)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	require.NoError(t, sink.Drain(ctx, zl))
	assert.LessOrEqual(t, logs.Len(), 3, "errors are rate-limited")
}

// A format taken from shared memory must not blow up into megabytes.
func TestMessageTextBounded(t *testing.T) {
	for _, format := range []string{
		strings.Repeat("%999999[1]d", 18),
		strings.Repeat("%.999999[1]f", 16),
		strings.Repeat("%*d", 60),
		strings.Repeat("%[1]*[1]d", 20),
		strings.Repeat("%f", 100),
	} {
		m := Message{Format: format[:min(len(format), MaxFormat)], Args: []any{int64(999999), 1e308}}
		assert.LessOrEqual(t, len(m.Text()), 4096, "format %.20q...", format)
	}
}

// fakeClock drives a Sink's back-off without sleeping.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func useFakeClock(s *Sink) *fakeClock    { c := &fakeClock{t: time.Unix(1e9, 0)}; s.now = c.now; return c }

// After damage the ring is skipped for a back-off that doubles up to a
// second, reported at most once a second, counted, and then read again.
func TestDrainDamageBackoffAndRecovery(t *testing.T) {
	sink := NewSink(LevelAll)
	clock := useFakeClock(sink)
	log, err := sink.Logger("servo", 0)
	require.NoError(t, err)
	zl, logs := observed(zapcore.DebugLevel)
	damage := func() {
		log.Info("victim")
		corruptNextLength(t, log, 0xFFFFFFFF)
	}
	damage()
	assert.Zero(t, sink.DrainOnce(zl))
	assert.Equal(t, uint64(1), sink.Damaged())
	reports := logs.FilterMessage("msg: ring damaged by a writer, skipped")
	require.Equal(t, 1, reports.Len())
	assert.Equal(t, "servo", reports.All()[0].ContextMap()["task"])
	assert.Empty(t, reports.All()[0].Stack, "no stack trace")

	log.Info("after")
	assert.Zero(t, sink.DrainOnce(zl), "backing off")
	clock.add(DefaultPollInterval)
	assert.Equal(t, 1, sink.DrainOnce(zl), "the ring is read again after the back-off")
	assert.Equal(t, "after", logs.All()[logs.Len()-1].Message)

	// Damage that goes on: the back-off doubles up to maxBackoff, and the
	// reports stay at one a second.
	var backoff time.Duration
	for range 12 {
		damage()
		sink.DrainOnce(zl)
		backoff = sink.sources[0].backoff
		clock.add(backoff)
	}
	assert.Equal(t, maxBackoff, backoff)
	assert.Equal(t, uint64(13), sink.Damaged())
	assert.Less(t, reports.Len(), 12)
}

// A record too large for any Logger, or one Decode refuses, is skipped and
// counted; the records after it are still read.
func TestDrainMalformedRecordSkipped(t *testing.T) {
	sink := NewSink(LevelAll)
	useFakeClock(sink)
	log, err := sink.Logger("servo", 0)
	require.NoError(t, err)
	require.NoError(t, log.ring.Put(make([]byte, maxRecordPayload+8)))
	require.NoError(t, log.ring.Put([]byte("not a message at all")))
	log.Info("good")
	zl, logs := observed(zapcore.DebugLevel)
	assert.Equal(t, 1, sink.DrainOnce(zl))
	assert.Equal(t, uint64(1), sink.Damaged())
	assert.Equal(t, 2, logs.Len())
	assert.Equal(t, "good", logs.All()[0].Message)
	assert.Equal(t, uint64(2), logs.All()[1].ContextMap()["malformedRecords"])
}

func TestSafeFormat(t *testing.T) {
	for format, safe := range map[string]bool{
		"plain":              true,
		"%d %5.2f %-8s %x%%": true,
		"%[2]d %[1]64d":      true,
		"%+#08.3[1]f":        true,
		"%65d":               false,
		"%.65f":              false,
		"%*d":                false,
		"%.*f":               false,
		"%[1]*d":             false,
		"%999999[1]d":        false,
		"trailing %":         true,
		"%[unclosed":         false,
		"%5[1]d %[1]5.2[2]f": true,
		"%[d%999999d":        false, // issue 20: the unclosed index hid the width
		"%[1":                false,
		"%[123]d":            false,
		"%!d":                false,
		"%-%":                true,
		"%\xffd":             false,
	} {
		assert.Equal(t, safe, safeFormat(format), "%q", format)
	}
	m := Message{Format: "%99d!", Args: []any{int64(7)}}
	assert.Equal(t, `[unsafe format] "%99d!" [7]`, m.Text())
}

// childHostile scribbles over the ring at [RTLOG_OFF, +RTLOG_SIZE) of
// segment 2 until killed: header indices, record headers and message bytes
// (format lengths, argument counts, '%' and digits), as a hostile process
// that can write the segment would.
func childHostile() int {
	seg, err := shm.Attach(shm.Options{Instance: testInstance}, 2)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	off, _ := strconv.Atoi(os.Getenv("RTLOG_OFF"))
	size, _ := strconv.Atoi(os.Getenv("RTLOG_SIZE"))
	mem := seg.Bytes()[off : off+size]
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 2))
	fmt.Println("ready")
	junk := []byte("%999999[1]d%*d%.99f%v%%9")
	for i := 0; ; i++ {
		switch rng.IntN(5) {
		case 0: // head or tail
			at := []int{64, 128}[rng.IntN(2)]
			v := atomic.LoadUint64((*uint64)(unsafe.Pointer(&mem[at])))
			atomic.StoreUint64((*uint64)(unsafe.Pointer(&mem[at])), v+uint64(rng.IntN(64))-32)
		case 1: // a record length
			at := ipc.RingHeaderSize + rng.IntN((size-ipc.RingHeaderSize)/8)*8
			atomic.StoreUint32((*uint32)(unsafe.Pointer(&mem[at])), []uint32{0, 8, 200, 0xFFFFFFFF, rng.Uint32()}[rng.IntN(5)])
		default: // message bytes
			mem[ipc.RingHeaderSize+rng.IntN(size-ipc.RingHeaderSize)] = junk[rng.IntN(len(junk))]
		}
		if i%8 == 0 {
			for range rng.IntN(200_000) {
				spin++
			}
		}
	}
}

var spin int

// A Logger writing into a segment ring and a Sink draining it while another
// process scribbles over the ring: only messages and bounded damage
// reports come out, each text bounded, and the drain finishes.
func TestHostileWriterMessageRing(t *testing.T) {
	rttest.RequireSelfExec(t) // before the segment exists: a skip must not leak it
	page := os.Getpagesize()
	size := ipc.RingSize(16 << 10)
	segSize := (shm.HeaderSize+size+page-1)/page*page + page - shm.HeaderSize
	seg, err := shm.Create(shm.Options{Instance: testInstance}, 2, segSize)
	require.NoError(t, err)
	defer seg.Delete()
	data := seg.Bytes()
	guard := len(data) - page
	require.NoError(t, unix.Mprotect(data[guard:], unix.PROT_NONE))
	off := guard - size
	ring, err := ipc.InitRecordRing(data[off:guard:guard])
	require.NoError(t, err)
	log, err := NewLogger(ring, "victim")
	require.NoError(t, err)
	sink := NewSink(LevelAll)
	clock := useFakeClock(sink)
	require.NoError(t, sink.AddRing(ring, "victim"))

	cmd := rttest.Child("hostile", "-test.run=^$")
	cmd.Env = append(cmd.Env, "RTLOG_INSTANCE="+strconv.Itoa(testInstance),
		"RTLOG_OFF="+strconv.Itoa(off), "RTLOG_SIZE="+strconv.Itoa(size))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line := make([]byte, 6)
	_, err = io.ReadFull(out, line)
	require.NoError(t, err)

	zl, logs := observed(zapcore.DebugLevel)
	rounds := rttest.Rounds(20000)
	for i := range rounds {
		log.Info("cycle %d took %.3f us, ok %v", Int(i), Float(1.5), Bool(true))
		if i%16 == 0 {
			sink.DrainOnce(zl)
			clock.add(10 * time.Millisecond)
		}
	}
	sink.DrainOnce(zl)
	messages, reports := 0, 0
	for _, e := range logs.All() {
		require.LessOrEqual(t, len(e.Message), MaxText+64)
		switch e.Message {
		case "msg: ring damaged by a writer, skipped":
			reports++
		case "msg: messages dropped":
		default:
			messages++
		}
	}
	t.Logf("%d messages, %d damage reports, Damaged %d, ring CorruptEvents %d", messages, reports, sink.Damaged(), ring.CorruptEvents())
	require.LessOrEqual(t, messages, rounds+1)
	require.LessOrEqual(t, reports, rounds/16/100+2, "at most one report a (fake) second")
}

// The drop counter of a ring of another process lives in shared memory:
// a writer changing it on every pass gets one WARN entry a second, not one
// a pass.
func TestForeignDropsReportedOncePerSecond(t *testing.T) {
	sink := NewSink(LevelAll)
	clock := useFakeClock(sink)
	mem := make([]uint64, ipc.RingSize(4096)/8)
	ring, err := ipc.InitRecordRing(unsafe.Slice((*byte)(unsafe.Pointer(&mem[0])), len(mem)*8))
	require.NoError(t, err)
	require.NoError(t, sink.AddRing(ring, "remote"))
	dropped := (*uint64)(unsafe.Pointer(&mem[9])) // the header's dropped counter
	zl, logs := observed(zapcore.DebugLevel)
	for i := range 100 {
		atomic.StoreUint64(dropped, uint64(i*1000+7))
		sink.DrainOnce(zl)
		clock.add(100 * time.Millisecond)
	}
	drops := logs.FilterMessage("msg: messages dropped")
	assert.Equal(t, 10, drops.Len())
	assert.Equal(t, uint64(7), drops.All()[0].ContextMap()["dropped"])
}

// childTruncate shrinks segment RTLOG_KEY to nothing, as a process that
// may write it can.
func childTruncate() int {
	key, _ := strconv.Atoi(os.Getenv("RTLOG_KEY"))
	if err := os.Truncate(shm.Options{Instance: testInstance}.Path(uint32(key)), 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// Another process truncates the segment that holds a drained ring: the
// drainer reports the damage and backs off; the process lives. Before, the
// drainer's Peek died of SIGBUS within one poll.
func TestDrainSurvivesTruncatedSegment(t *testing.T) {
	rttest.RequireSelfExec(t)
	const key = 3
	seg, err := shm.Create(shm.Options{Instance: testInstance}, key, ipc.RingSize(16<<10))
	require.NoError(t, err)
	defer seg.Delete()
	ring, err := ipc.RecordRingAt(seg, 0, ipc.RingSize(16<<10))
	require.NoError(t, err)
	log, err := NewLogger(ring, "remote")
	require.NoError(t, err)
	log.Info("before %d", Int(1))
	sink := NewSink(LevelAll)
	clock := useFakeClock(sink)
	require.NoError(t, sink.AddRing(ring, "remote"))

	cmd := rttest.Child("truncate")
	cmd.Env = append(cmd.Env, "RTLOG_INSTANCE="+strconv.Itoa(testInstance), "RTLOG_KEY="+strconv.Itoa(key))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)

	zl, logs := observed(zapcore.DebugLevel)
	assert.Zero(t, sink.DrainOnce(zl))
	assert.Equal(t, uint64(1), sink.Damaged())
	reports := logs.FilterMessage("msg: ring damaged by a writer, skipped")
	require.Equal(t, 1, reports.Len())
	assert.Equal(t, uint64(1), reports.All()[0].ContextMap()["truncated"])
	clock.add(time.Second)
	assert.True(t, sink.pending(), "damage to report, after the back-off")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, sink.Drain(ctx, zl), "the drain loop survives too")
	sink.RemoveRing(ring)
}
