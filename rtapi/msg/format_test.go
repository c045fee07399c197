//go:build linux

package msg

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/gortapi/gortapi/internal/rttest"
)

// maxBytesPerRecord is the most the drainer may allocate for one record
// written to a log: the decoded message and a bounded text.
const maxBytesPerRecord = 32 << 10

// allocatedBytes is what f allocates, from the runtime's own count.
func allocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A peer's format of issue 20 item 1 costs a bounded few bytes when logged,
// and nothing is formatted when the log drops the level: before, each such
// message cost 13.8 MB and 38 ms even into zap.NewNop.
func TestHostileFormatCostBounded(t *testing.T) {
	require.False(t, safeFormat(hostileFormat))
	sink := NewSink(LevelAll)
	l := foreignRing(t, sink, 1<<20)
	for _, zl := range []*zap.Logger{zap.NewNop(), jsonLogger(&bytes.Buffer{})} {
		const n = 50
		got := allocatedBytes(func() {
			for range n {
				l.Info(hostileFormat, Int(1), Int(2), Int(3))
				sink.DrainOnce(zl)
			}
		})
		assert.LessOrEqual(t, got, uint64(n*maxBytesPerRecord), "bytes allocated for %d messages", n)
	}
	// Below the log's level nothing is decoded or formatted: the drain
	// allocates only its per-pass bookkeeping.
	allocs := testing.AllocsPerRun(100, func() {
		l.Info(hostileFormat, Int(1), Int(2), Int(3))
		sink.DrainOnce(zap.NewNop())
	})
	assert.LessOrEqual(t, allocs, 3.0, "allocations per message into a logger that drops it")
}

func jsonLogger(w *bytes.Buffer) *zap.Logger {
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.AddSync(w), zapcore.DebugLevel))
}

// Valid messages as fast as a peer can write them reach the log at no
// more than RateLimit a second per ring, plus one report of the rest.
// Before: every one of them was a log line (125-187 k lines/s in a host).
func TestFloodRateLimited(t *testing.T) {
	sink := NewSink(LevelAll)
	clock := useFakeClock(sink)
	l := foreignRing(t, sink, 1<<20)
	zl, logs := observed(zapcore.DebugLevel)
	const sent = 3 * DefaultRateLimit
	for i := range sent {
		l.Warn("valid message %d", Int(i))
	}
	assert.Equal(t, sent, sink.DrainOnce(zl), "everything is consumed")
	assert.Equal(t, DefaultRateLimit, logs.FilterMessageSnippet("valid message").Len())
	assert.Equal(t, uint64(sent-DefaultRateLimit), sink.Suppressed())
	reports := logs.FilterMessage("msg: messages suppressed by the rate limit").All()
	require.Len(t, reports, 1)
	assert.Equal(t, uint64(sent-DefaultRateLimit), reports[0].ContextMap()["suppressed"])
	// The next second has a fresh allowance.
	clock.add(time.Second)
	l.Warn("valid message %d", Int(-1))
	sink.DrainOnce(zl)
	assert.Equal(t, DefaultRateLimit+1, logs.FilterMessageSnippet("valid message").Len())
	sink.RateLimit = 2
	clock.add(time.Second)
	for range 5 {
		l.Warn("valid message again")
	}
	sink.DrainOnce(zl)
	assert.Equal(t, 2, logs.FilterMessage("valid message again").Len())
}

// A peer's newlines and escape sequences never reach a log raw: one
// message is one line, and a forged line stays inside it, escaped.
func TestControlCharactersEscaped(t *testing.T) {
	sink := NewSink(LevelAll)
	l := foreignRing(t, sink, 64<<10)
	var out bytes.Buffer
	zl := jsonLogger(&out)
	l.Err("ok\n2026-01-01T00:00:00Z\tERROR\tforged %d\r\x1b[2J\x1b]0;t\x07 \xff\u0085 tab\tend", Int(7))
	require.Equal(t, 1, sink.DrainOnce(zl))
	line := out.String()
	assert.Equal(t, 1, strings.Count(line, "\n"), "one line: %q", line)
	assert.True(t, strings.HasSuffix(line, "\n"))
	for _, c := range "\r\x1b\x07\u0085" {
		assert.NotContains(t, line, string(c))
	}
	assert.NotContains(t, line, "\xff")
	assert.Contains(t, line, `ok\n2026-01-01T00:00:00Z\tERROR\tforged 7\r\x1b[2J`)
	assert.Contains(t, line, `\xff\u0085`)
	m := Message{Format: "clean %d µs", Args: []any{int64(3)}}
	assert.Equal(t, "clean 3 µs", m.Text())
}

// hostileFormats are targeted formats of the message hostile-writer
// harness: unclosed indices, huge and indirect widths, bad verbs, control
// characters, invalid UTF-8.
var hostileFormats = []string{
	hostileFormat,
	strings.Repeat("%[", 100),
	strings.Repeat("%[1]*[1]d", 20),
	strings.Repeat("%064.64[1]f", 16),
	strings.Repeat("%v", 100),
	strings.Repeat("%x", 100),
	strings.Repeat("%[9]d", 40),
	strings.Repeat("%!%", 66),
	"%[99999999999999999999]d",
	"%999999999999999999999999d",
	"\x1b[31m%d\n\r\x00\xff\xfe",
	strings.Repeat("\n", MaxFormat),
	strings.Repeat("\xff", MaxFormat),
}

// randomFormat builds a format from the pieces fmt's parser reacts to.
func randomFormat(rng *rand.Rand) string {
	pieces := []string{"%", "[", "]", "1", "9", "64", "65", "999999", "*", ".", "+", "-", "#", " ", "0",
		"d", "f", "v", "x", "q", "s", "e", "g", "t", "!", "\n", "\x1b", "\xff", "\u0085", "é", "text "}
	var b strings.Builder
	for b.Len() < MaxFormat {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// randomArgs returns up to MaxArgs+1 arguments of random kinds and values.
func randomArgs(rng *rand.Rand) []Arg {
	args := make([]Arg, rng.IntN(MaxArgs+2))
	for i := range args {
		switch rng.IntN(4) {
		case 0:
			args[i] = Int(int64(rng.Uint64()))
		case 1:
			args[i] = Uint(rng.Uint64())
		case 2:
			args[i] = Float([]float64{1e308, -1e-308, 0, 1.5}[rng.IntN(4)])
		default:
			args[i] = Bool(rng.IntN(2) == 0)
		}
	}
	return args
}

// The message part of the hostile-writer harness: targeted and random
// formats, every argument kind and count, control characters. Each record
// costs at most maxBytesPerRecord, renders to at most MaxText bytes plus
// its marks, and to exactly one line.
func TestHostileMessageFormats(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	sink := NewSink(LevelAll)
	sink.RateLimit = 1 << 30 // every record is to reach the log
	l := foreignRing(t, sink, 1<<20)
	var out bytes.Buffer
	zl := jsonLogger(&out)
	formats := append([]string(nil), hostileFormats...)
	for range rttest.Rounds(2000) {
		formats = append(formats, randomFormat(rng))
	}
	for _, format := range formats {
		args := randomArgs(rng)
		out.Reset()
		got := allocatedBytes(func() {
			l.Err(format, args...)
			sink.DrainOnce(zl)
		})
		require.LessOrEqual(t, got, uint64(maxBytesPerRecord), "format %q", format)
		line := out.String()
		require.Equal(t, 1, strings.Count(line, "\n"), "format %q gave %q", format, line)
		require.LessOrEqual(t, len(line), 4*MaxText+256, "format %q", format)
		require.NotContains(t, line, "\x1b", "format %q", format)
	}
}

// FuzzMessageText: for any format and arguments, Text is bounded in length
// and in what it allocates, and holds no control character.
func FuzzMessageText(f *testing.F) {
	for _, format := range hostileFormats {
		f.Add(format, int64(999999), 1e308, uint8(3))
	}
	f.Add("cycle %d took %.3f", int64(1), 1.5, uint8(2))
	f.Fuzz(func(t *testing.T, format string, i int64, x float64, n uint8) {
		if len(format) > MaxFormat {
			format = format[:MaxFormat]
		}
		args := []any{i, x, uint64(i), i != 0, i, x}[:int(n)%(MaxArgs+1)]
		m := Message{Format: format, Args: args}
		var text string
		if got := allocatedBytes(func() { text = m.Text() }); got > maxBytesPerRecord {
			t.Fatalf("format %q: Text allocated %d bytes", format, got)
		}
		if len(text) > 4*MaxText+64 {
			t.Fatalf("format %q: %d bytes of text", format, len(text))
		}
		for _, r := range text {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("format %q: control character %q in %q", format, r, text)
			}
		}
	})
}
