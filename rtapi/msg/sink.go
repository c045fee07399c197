package msg

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/ipc"
)

// DefaultPollInterval is how often Drain polls rings whose writers cannot
// wake it (those of other processes).
const DefaultPollInterval = 20 * time.Millisecond

// A damaged ring is discarded and backed off, from the poll interval
// doubling up to maxBackoff; damage and drops are reported at most once per
// reportEvery per ring.
const (
	maxBackoff  = time.Second
	reportEvery = time.Second
)

// DefaultRateLimit is how many messages a second one ring may put into the
// log. The rest are consumed unformatted, counted (Sink.Suppressed) and
// reported as one WARN entry a second per ring.
const DefaultRateLimit = 1000

// Sink owns the rings of its Loggers and drains them into zap. It is safe
// for concurrent use; its methods allocate and lock. It treats rings of
// other processes as untrusted (package doc).
type Sink struct {
	level atomic.Int32
	bell  uint32 // futex word: bellSleeping while Drain waits
	// callers: the zap logger last drained into (probed) shows callers, so
	// the Loggers record call sites; true until a drain says otherwise.
	callers atomic.Bool
	probed  *zap.Logger

	drainMu sync.Mutex // held while rings are read; RemoveRing waits on it
	mu      sync.Mutex
	sources []*source
	running bool
	// PollInterval overrides DefaultPollInterval when set before Drain.
	PollInterval time.Duration
	// RateLimit overrides DefaultRateLimit when positive and set before
	// Drain.
	RateLimit int

	suppressed atomic.Uint64 // messages over the rate limit
	damaged    atomic.Uint64 // rings found corrupt plus records refused
	now        func() time.Time
}

type source struct {
	ring    *ipc.RecordRing
	task    string
	dropped uint64 // ring drops already reported
	logger  *Logger
	lost    uint64 // logger drops already reported

	buf []byte // a record is copied here before it is checked
	// Damage handling (see maxBackoff); touched only under drainMu.
	corrupt    uint64        // times the ring was found corrupt, not yet reported
	malformed  uint64        // records refused, not yet reported
	truncated  uint64        // reads that faulted on a truncated segment, not yet reported
	backoff    time.Duration // current back-off, 0 while the ring is healthy
	retryAt    time.Time     // leave the ring alone until then
	reportedAt time.Time     // last damage report

	dropsReportedAt time.Time // last drop report of a ring of another process

	// Rate limit (admit); touched only under drainMu.
	windowStart          time.Time
	windowLines          int
	suppressed           uint64 // over the limit, not yet reported
	suppressedReportedAt time.Time
}

// caller is the zap caller of a message: the task's call site for this
// Sink's Logger, none for another process's ring (its PCs mean nothing here).
func (src *source) caller(pc uintptr) zapcore.EntryCaller {
	if src.logger == nil || pc == 0 {
		return zapcore.EntryCaller{}
	}
	frame, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	if frame.PC == 0 {
		return zapcore.EntryCaller{}
	}
	return zapcore.EntryCaller{Defined: true, PC: frame.PC, File: frame.File, Line: frame.Line, Function: frame.Function}
}

// wantsCallers reports whether zl shows callers (zap.AddCaller), by
// checking an entry it never writes.
func wantsCallers(zl *zap.Logger) bool {
	ce := zl.Check(zapcore.ErrorLevel, "")
	return ce != nil && ce.Caller.Defined
}

func newSource(ring *ipc.RecordRing, task string) *source {
	return &source{ring: ring, task: task, buf: make([]byte, maxRecordPayload)}
}

// NewSink returns a Sink whose Loggers pass messages at or below level.
func NewSink(level Level) *Sink {
	s := &Sink{now: time.Now}
	s.level.Store(int32(level))
	s.callers.Store(true)
	return s
}

// SetLevel sets the threshold of every Logger of this Sink.
func (s *Sink) SetLevel(lv Level) { s.level.Store(int32(lv)) }

// Level returns the threshold.
func (s *Sink) Level() Level { return Level(s.level.Load()) }

// Logger returns a new Logger for task with its own in-process ring of
// capacity bytes (0 means 64 KiB). Give each task its own Logger.
func (s *Sink) Logger(task string, capacity int) (*Logger, error) {
	if capacity == 0 {
		capacity = defaultCapacity
	}
	if capacity < 0 {
		return nil, fmt.Errorf("%w: Sink.Logger(%q): negative capacity %d", ErrInvalid, task, capacity)
	}
	words := make([]uint64, ipc.RingSize(max(capacity, 4*maxRecordPayload))/8)
	ring, err := ipc.InitRecordRing(unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8))
	if err != nil {
		return nil, err
	}
	l, err := NewLogger(ring, task)
	if err != nil {
		return nil, err
	}
	l.level = &s.level
	l.bell = &s.bell
	l.callers = &s.callers
	s.mu.Lock()
	src := newSource(ring, l.task)
	src.logger = l
	s.sources = append(s.sources, src)
	s.mu.Unlock()
	return l, nil
}

// AddRing adds a ring written by someone else, such as another process's
// Logger in a shared segment; task names it in reports.
func (s *Sink) AddRing(ring *ipc.RecordRing, task string) error {
	if ring == nil {
		return fmt.Errorf("%w: Sink.AddRing(%q): nil ring", ErrInvalid, task)
	}
	src := newSource(ring, task)
	if err := ring.Guard(func() { src.dropped = ring.Dropped() }); err != nil {
		return fmt.Errorf("Sink.AddRing(%q): %w", task, err)
	}
	s.mu.Lock()
	s.sources = append(s.sources, src)
	s.mu.Unlock()
	return nil
}

// RemoveRing stops draining ring; once it returns, the ring's segment may
// be unmapped.
func (s *Sink) RemoveRing(ring *ipc.RecordRing) {
	s.drainMu.Lock()
	defer s.drainMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, src := range s.sources {
		if src.ring == ring {
			s.sources = append(s.sources[:i], s.sources[i+1:]...)
			return
		}
	}
}

// Message is one decoded record.
type Message struct {
	Time   time.Time
	Level  Level
	Task   string
	Format string
	Args   []any // int64, uint64, float64 or bool
	Flags  uint8
	// PC is the call site's program counter in the writing process, 0 if
	// not recorded.
	PC uintptr
}

// MaxText is the longest text Message.Text returns; longer text is cut.
const MaxText = 1024

// maxWidth is the largest width or precision Text lets fmt render.
const maxWidth = 64

// Text renders the message with fmt.Sprintf, marking cut formats and
// dropped arguments, as one bounded line: a format that is not plain fmt
// syntax (widths and precisions over 64, '*', an open '[') is shown quoted
// with the arguments instead; text is cut at MaxText bytes; control
// characters and invalid UTF-8 are escaped as Go escapes them.
func (m *Message) Text() string {
	var s string
	if safeFormat(m.Format) {
		s = fmt.Sprintf(m.Format, m.Args...)
	} else {
		s = fmt.Sprintf("[unsafe format] %q %v", m.Format, m.Args)
	}
	if len(s) > MaxText {
		s = s[:MaxText] + " [text cut]"
	}
	s = escapeControl(s)
	if m.Flags&flagFormatCut != 0 {
		s += " [format cut]"
	}
	if m.Flags&flagArgsDropped != 0 {
		s += " [arguments dropped]"
	}
	return s
}

// escapeControl returns s with C0 and C1 control characters, DEL and
// invalid UTF-8 escaped as strconv.Quote would; s itself when it has none.
func escapeControl(s string) string {
	control := func(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f || r == utf8.RuneError }
	if !strings.ContainsFunc(s, control) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if control(r) {
			q := strconv.QuoteToASCII(s[i : i+n])
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// safeFormat reports whether every directive of format is '%', flags, an
// optional closed [n] index, digit width and precision of at most maxWidth,
// and an ASCII letter or '%': output then stays near the input's size.
func safeFormat(format string) bool {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			i++
		}
		var ok bool
		if i, ok = scanIndex(format, i); !ok {
			return false
		}
		if i, ok = scanWidth(format, i); !ok {
			return false
		}
		if i < len(format) && format[i] == '.' {
			if i, ok = scanIndex(format, i+1); !ok {
				return false
			}
			if i, ok = scanWidth(format, i); !ok {
				return false
			}
		}
		if i, ok = scanIndex(format, i); !ok {
			return false
		}
		if i == len(format) {
			return true // a trailing '%': fmt writes %!(NOVERB)
		}
		if c := format[i]; c != '%' && (c|0x20 < 'a' || c|0x20 > 'z') {
			return false
		}
	}
	return true
}

// scanIndex skips an argument index "[n]" (n of one or two digits) at i.
func scanIndex(format string, i int) (int, bool) {
	if i >= len(format) || format[i] != '[' {
		return i, true
	}
	j := i + 1
	for j < len(format) && j-i <= 2 && format[j] >= '0' && format[j] <= '9' {
		j++
	}
	if j == i+1 || j >= len(format) || format[j] != ']' {
		return i, false
	}
	return j + 1, true
}

// scanWidth skips a width or precision of at most maxWidth at i.
func scanWidth(format string, i int) (int, bool) {
	num := 0
	for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
		num = num*10 + int(format[i]-'0')
		if num > maxWidth {
			return i, false
		}
	}
	return i, i >= len(format) || format[i] != '*'
}

var errBadRecord = errors.New("msg: malformed record")

// Decode parses one record payload written by a Logger.
func Decode(b []byte) (Message, error) {
	if checkRecord(b) != nil {
		return Message{}, errBadRecord
	}
	n, t, f := int(b[9]), int(b[11]), int(binary.LittleEndian.Uint16(b[12:]))
	m := Message{
		Time:  time.Unix(0, int64(binary.LittleEndian.Uint64(b))),
		Level: Level(b[8]),
		Flags: b[10],
		Args:  make([]any, n),
	}
	kinds := b[recFixed+8*n:]
	for i := range n {
		bits := binary.LittleEndian.Uint64(b[recFixed+8*i:])
		switch argKind(kinds[i]) {
		case kindInt:
			m.Args[i] = int64(bits)
		case kindUint:
			m.Args[i] = bits
		case kindFloat:
			m.Args[i] = math.Float64frombits(bits)
		case kindBool: // checkRecord refused every other kind
			m.Args[i] = bits != 0
		}
	}
	m.Task = string(kinds[n : n+t])
	m.Format = string(kinds[n+t : n+t+f])
	if b[10]&flagCaller != 0 {
		m.PC = uintptr(binary.LittleEndian.Uint64(kinds[n+t+f:]))
	}
	return m, nil
}

// checkRecord does Decode's checks without allocating: lengths and
// argument kinds.
func checkRecord(b []byte) error {
	if len(b) < recFixed {
		return errBadRecord
	}
	n, t, f := int(b[9]), int(b[11]), int(binary.LittleEndian.Uint16(b[12:]))
	pcLen := 0
	if b[10]&flagCaller != 0 {
		pcLen = 8
	}
	if n > MaxArgs || t > MaxTask || f > MaxFormat || len(b) != recFixed+9*n+t+f+pcLen {
		return errBadRecord
	}
	for _, k := range b[recFixed+8*n : recFixed+9*n] {
		if k < uint8(kindInt) || k > uint8(kindBool) {
			return errBadRecord
		}
	}
	return nil
}

func zapLevel(l Level) zapcore.Level {
	switch l {
	case LevelErr:
		return zapcore.ErrorLevel
	case LevelWarn:
		return zapcore.WarnLevel
	case LevelInfo:
		return zapcore.InfoLevel
	}
	return zapcore.DebugLevel
}

// DrainOnce moves the messages now in the rings into zl, reports drops as
// one WARN entry per source, and returns the well-formed messages consumed
// (written, or left out by zl's level or the rate limit). It reads at most
// one ring's worth per ring; a damaged ring is skipped (Damaged).
func (s *Sink) DrainOnce(zl *zap.Logger) int {
	s.drainMu.Lock()
	defer s.drainMu.Unlock()
	if zl != s.probed {
		s.probed = zl
		s.callers.Store(wantsCallers(zl))
	}
	s.mu.Lock()
	sources := append([]*source(nil), s.sources...)
	s.mu.Unlock()
	now := s.now()
	total := 0
	for _, src := range sources {
		if now.Before(src.retryAt) {
			continue
		}
		total += s.drainSource(src, zl, now)
		s.reportDrops(src, zl, now)
	}
	return total
}

// reportDrops writes one WARN entry with the drops of src since the last.
// Another process's ring counts drops in shared memory a peer may change,
// so those are reported at most once per reportEvery.
func (s *Sink) reportDrops(src *source, zl *zap.Logger, now time.Time) {
	if src.suppressed > 0 && (src.suppressedReportedAt.IsZero() || now.Sub(src.suppressedReportedAt) >= reportEvery) {
		zl.Warn("msg: messages suppressed by the rate limit", zap.String("task", src.task),
			zap.Uint64("suppressed", src.suppressed), zap.Int("perSecond", s.rateLimit()))
		src.suppressed = 0
		src.suppressedReportedAt = now
	}
	var lost uint64
	if src.logger != nil {
		d := src.logger.Dropped() // counts ring-full drops too: report its total
		lost = d - src.lost
		src.lost = d
	} else {
		if !src.dropsReportedAt.IsZero() && now.Sub(src.dropsReportedAt) < reportEvery {
			return
		}
		var d uint64
		if src.ring.Guard(func() { d = src.ring.Dropped() }) != nil {
			return // truncated: drainSource reports it
		}
		lost = d - src.dropped
		src.dropped = d
	}
	if lost > 0 {
		src.dropsReportedAt = now
		zl.Warn("msg: messages dropped", zap.String("task", src.task), zap.Uint64("dropped", lost))
	}
}

// drainSource writes the messages of one ring into zl, under its segment's
// Guard, backs it off on damage, and returns how many it consumed.
func (s *Sink) drainSource(src *source, zl *zap.Logger, now time.Time) int {
	var total int
	var damaged bool
	if err := src.ring.Guard(func() { total, damaged = s.readSource(src, zl, now) }); err != nil {
		src.truncated++
		damaged = true
	}
	if !damaged {
		src.backoff = 0
		return total
	}
	s.damaged.Add(1)
	src.backoff = min(max(2*src.backoff, s.pollInterval()), maxBackoff)
	src.retryAt = now.Add(src.backoff)
	if src.reportedAt.IsZero() || now.Sub(src.reportedAt) >= reportEvery {
		zl.WithOptions(zap.AddStacktrace(zapcore.InvalidLevel)).Error("msg: ring damaged by a writer, skipped",
			zap.String("task", src.task), zap.Uint64("corrupt", src.corrupt), zap.Uint64("malformedRecords", src.malformed),
			zap.Uint64("truncated", src.truncated), zap.Duration("backoff", src.backoff))
		src.corrupt, src.malformed, src.truncated = 0, 0, 0
		src.reportedAt = now
	}
	return total
}

// readSource is drainSource's reading loop.
func (s *Sink) readSource(src *source, zl *zap.Logger, now time.Time) (total int, damaged bool) {
	for range src.ring.Capacity()/8 + 1 { // the most records a ring holds
		p, err := src.ring.Peek()
		if errors.Is(err, ipc.ErrEmpty) {
			break
		}
		if err != nil {
			src.corrupt++
			damaged = true
			_, _ = src.ring.Discard()
			break
		}
		n := copy(src.buf, p)
		fits := n == len(p)
		_ = src.ring.Consume()
		b := src.buf[:n]
		if !fits || checkRecord(b) != nil {
			src.malformed++
			damaged = true
			continue
		}
		total++
		lv := zapLevel(Level(b[8]))
		if !zl.Core().Enabled(lv) || !s.admit(src, now) {
			continue
		}
		m, _ := Decode(b)
		if ce := zl.Check(lv, m.Text()); ce != nil {
			ce.Time = m.Time
			if ce.Caller.Defined {
				ce.Caller = src.caller(m.PC)
			}
			// A stack taken here would be the drainer's, not the task's.
			ce.Stack = ""
			ce.Write(zap.String("task", m.Task))
		}
	}
	return total, damaged
}

// admit reports whether src is under RateLimit for one more message now,
// counting a refusal.
func (s *Sink) admit(src *source, now time.Time) bool {
	if now.Sub(src.windowStart) >= time.Second || now.Before(src.windowStart) {
		src.windowStart, src.windowLines = now, 0
	}
	if src.windowLines >= s.rateLimit() {
		src.suppressed++
		s.suppressed.Add(1)
		return false
	}
	src.windowLines++
	return true
}

func (s *Sink) rateLimit() int { return cmp.Or(max(s.RateLimit, 0), DefaultRateLimit) }

// Suppressed returns how many well-formed messages the Sink consumed
// without writing them because their ring was over RateLimit.
func (s *Sink) Suppressed() uint64 { return s.suppressed.Load() }

// Damaged returns how many times the Sink skipped a damaged or truncated
// ring.
func (s *Sink) Damaged() uint64 { return s.damaged.Load() }

func (s *Sink) pollInterval() time.Duration {
	return cmp.Or(max(s.PollInterval, 0), DefaultPollInterval)
}

// pending reports whether a ring not backing off holds something or damage.
// Only the drainer calls it: it reads the rings as their consumer.
func (s *Sink) pending() bool {
	s.drainMu.Lock()
	defer s.drainMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, src := range s.sources {
		if now.Before(src.retryAt) {
			continue
		}
		// Peek, not Used: it trusts only the drainer's own position.
		var err error
		if gerr := src.ring.Guard(func() { _, err = src.ring.Peek() }); gerr != nil || !errors.Is(err, ipc.ErrEmpty) {
			return true
		}
	}
	return false
}

// Drain writes messages into zl until ctx is cancelled, then drains what is
// left and returns nil. This Sink's Loggers wake it; other rings are polled
// every PollInterval. A second concurrent Drain is ErrInvalid. It blocks.
func (s *Sink) Drain(ctx context.Context, zl *zap.Logger) error {
	if zl == nil {
		return fmt.Errorf("%w: Sink.Drain: nil zap logger", ErrInvalid)
	}
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return fmt.Errorf("%w: Sink.Drain already running", ErrInvalid)
	}
	s.running = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	poll := s.pollInterval()
	stop := context.AfterFunc(ctx, func() {
		atomic.StoreUint32(&s.bell, bellAwake)
		_, _ = sys.FutexWake(&s.bell, 1)
	})
	defer stop()
	for {
		s.DrainOnce(zl)
		if ctx.Err() != nil {
			s.DrainOnce(zl)
			return nil
		}
		atomic.StoreUint32(&s.bell, bellSleeping)
		if s.pending() || ctx.Err() != nil {
			atomic.StoreUint32(&s.bell, bellAwake)
			continue
		}
		if _, err := sys.FutexWait(&s.bell, bellSleeping, int64(poll)); err != nil {
			return err
		}
		atomic.StoreUint32(&s.bell, bellAwake)
	}
}
