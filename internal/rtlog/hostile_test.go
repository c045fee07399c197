//go:build linux

package rtlog

import (
	"context"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
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
	reports := logs.FilterMessage("rtlog: ring damaged by a writer, skipped")
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
		"%[unclosed":         true,
	} {
		assert.Equal(t, safe, safeFormat(format), "%q", format)
	}
	m := Message{Format: "%99d!", Args: []any{int64(7)}}
	assert.Equal(t, `[unsafe format] "%99d!" [7]`, m.Text())
}
