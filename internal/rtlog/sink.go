package rtlog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gortapi/gortapi/internal/ipc"
	"github.com/gortapi/gortapi/internal/sys"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// DefaultPollInterval is how often Drain looks at rings whose writers cannot
// wake it (rings in a segment written by another process).
const DefaultPollInterval = 20 * time.Millisecond

// Sink owns the rings of its Loggers and drains them into zap. It is safe
// for concurrent use; its methods are not RT-safe (they allocate and lock),
// except that the Loggers it hands out are.
type Sink struct {
	level atomic.Int32
	bell  uint32 // futex word: bellSleeping while Drain waits

	drainMu sync.Mutex // held while rings are read; RemoveRing waits on it
	mu      sync.Mutex
	sources []*source
	running bool
	// PollInterval overrides DefaultPollInterval when set before Drain.
	PollInterval time.Duration
}

type source struct {
	ring    *ipc.RecordRing
	task    string
	dropped uint64 // ring drops already reported
	logger  *Logger
	lost    uint64 // logger drops already reported
}

// NewSink returns a Sink whose Loggers pass messages at or below level.
func NewSink(level Level) *Sink {
	s := &Sink{}
	s.level.Store(int32(level))
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
	s.mu.Lock()
	s.sources = append(s.sources, &source{ring: ring, task: l.task, logger: l})
	s.mu.Unlock()
	return l, nil
}

// AddRing adds a ring written by someone else (typically a Logger in another
// process, over a ring in a shared segment). task names it in drop reports.
func (s *Sink) AddRing(ring *ipc.RecordRing, task string) error {
	if ring == nil {
		return fmt.Errorf("%w: Sink.AddRing(%q): nil ring", ErrInvalid, task)
	}
	s.mu.Lock()
	s.sources = append(s.sources, &source{ring: ring, task: task, dropped: ring.Dropped()})
	s.mu.Unlock()
	return nil
}

// RemoveRing stops draining ring. When it returns, the Sink no longer
// touches the ring's memory, so the segment holding it may be unmapped.
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
}

// Text renders the message with fmt.Sprintf, marking cut formats and
// dropped arguments.
func (m *Message) Text() string {
	s := fmt.Sprintf(m.Format, m.Args...)
	if m.Flags&flagFormatCut != 0 {
		s += " [format cut]"
	}
	if m.Flags&flagArgsDropped != 0 {
		s += " [arguments dropped]"
	}
	return s
}

var errBadRecord = errors.New("rtlog: malformed record")

// Decode parses one record payload written by a Logger.
func Decode(b []byte) (Message, error) {
	if len(b) < recFixed {
		return Message{}, errBadRecord
	}
	n, t, f := int(b[9]), int(b[11]), int(binary.LittleEndian.Uint16(b[12:]))
	if n > MaxArgs || t > MaxTask || f > MaxFormat || len(b) != recFixed+9*n+t+f {
		return Message{}, errBadRecord
	}
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
		case kindBool:
			m.Args[i] = bits != 0
		default:
			return Message{}, errBadRecord
		}
	}
	m.Task = string(kinds[n : n+t])
	m.Format = string(kinds[n+t : n+t+f])
	return m, nil
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

// DrainOnce moves every message now in the rings into zl and reports drops
// seen since the last call as one WARN entry per source. It returns the
// number of messages written.
func (s *Sink) DrainOnce(zl *zap.Logger) int {
	s.drainMu.Lock()
	defer s.drainMu.Unlock()
	s.mu.Lock()
	sources := append([]*source(nil), s.sources...)
	s.mu.Unlock()
	total := 0
	for _, src := range sources {
		for {
			p, err := src.ring.Peek()
			if err != nil {
				if !errors.Is(err, ipc.ErrEmpty) {
					zl.Error("rtlog: ring unreadable", zap.String("task", src.task), zap.Error(err))
				}
				break
			}
			m, err := Decode(p)
			_ = src.ring.Consume()
			if err != nil {
				zl.Error("rtlog: malformed record skipped", zap.String("task", src.task), zap.Int("bytes", len(p)))
				continue
			}
			total++
			if ce := zl.Check(zapLevel(m.Level), m.Text()); ce != nil {
				ce.Time = m.Time
				ce.Write(zap.String("task", m.Task))
			}
		}
		lost := src.ring.Dropped() - src.dropped
		src.dropped += lost
		if src.logger != nil {
			d := src.logger.Dropped()
			// The Logger counts ring-full drops too; report its total.
			lost = d - src.lost
			src.lost = d
		}
		if lost > 0 {
			zl.Warn("rtlog: messages dropped", zap.String("task", src.task), zap.Uint64("dropped", lost))
		}
	}
	return total
}

func (s *Sink) pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, src := range s.sources {
		if src.ring.Used() != 0 {
			return true
		}
	}
	return false
}

// Drain writes messages into zl until ctx is cancelled, then drains what is
// left and returns nil. Loggers of this Sink wake it at once; other rings
// are polled every PollInterval. Only one Drain may run at a time. It blocks:
// run it in its own non-RT goroutine.
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
	poll := s.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
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
