package msg

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/ipc"
)

// Level is a message level, numbered like RTAPI's msg_level_t.
type Level int32

// Levels. A Logger passes messages at or below its threshold (default
// LevelInfo).
const (
	LevelNone Level = iota // RTAPI_MSG_NONE: as a threshold, pass nothing
	LevelErr               // RTAPI_MSG_ERR
	LevelWarn              // RTAPI_MSG_WARN
	LevelInfo              // RTAPI_MSG_INFO
	LevelDbg               // RTAPI_MSG_DBG
	LevelAll               // RTAPI_MSG_ALL: as a threshold, pass everything
)

// String returns "NONE", "ERR", "WARN", "INFO", "DBG", "ALL".
func (l Level) String() string {
	if names := [...]string{"NONE", "ERR", "WARN", "INFO", "DBG", "ALL"}; l >= 0 && int(l) < len(names) {
		return names[l]
	}
	return "Level(" + strconv.Itoa(int(l)) + ")"
}

// ErrInvalid is rtapi.ErrInvalid: a bad argument.
var ErrInvalid = errs.Invalid

// Limits of one message.
const (
	MaxArgs   = 6
	MaxFormat = 200
	MaxTask   = 32
)

type argKind uint8

const (
	kindInt argKind = iota + 1
	kindUint
	kindFloat
	kindBool
)

// Arg is one numeric argument of a message, built without allocating by
// Int, Uint, Float or Bool.
type Arg struct {
	kind argKind
	bits uint64
}

// Integer is any signed integer type.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

// Unsigned is any unsigned integer type.
type Unsigned interface {
	~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// Int makes a signed integer argument (also for time.Duration).
func Int[T Integer](v T) Arg { return Arg{kindInt, uint64(int64(v))} }

// Uint makes an unsigned integer argument.
func Uint[T Unsigned](v T) Arg { return Arg{kindUint, uint64(v)} }

// Float makes a floating-point argument.
func Float[T ~float32 | ~float64](v T) Arg { return Arg{kindFloat, math.Float64bits(float64(v))} }

// Bool makes a boolean argument.
func Bool(v bool) Arg {
	if v {
		return Arg{kindBool, 1}
	}
	return Arg{kindBool, 0}
}

// Record layout (little endian), after the ring's record header:
//
//	0  int64   wall-clock time, ns since the epoch
//	8  uint8   level
//	9  uint8   number of arguments n
//	10 uint8   flags
//	11 uint8   task name length t
//	12 uint16  format length f
//	14 uint16  reserved
//	16 [n]{uint64} argument bits
//	16+8n [n]uint8 argument kinds
//	...   [t]byte task name, [f]byte format
//	...   uint64 the call site's program counter, with flagCaller only
const (
	recFixed         = 16
	flagArgsDropped  = 1
	flagFormatCut    = 2
	flagCaller       = 4
	defaultCapacity  = 64 << 10
	bellSleeping     = 1
	bellAwake        = 0
	maxRecordPayload = recFixed + MaxArgs*9 + MaxTask + MaxFormat + 8
)

// Logger writes messages of one task into one ring. A nil *Logger drops
// everything. Concurrent calls corrupt nothing, but all but one are dropped
// and counted.
type Logger struct {
	ring    *ipc.RecordRing
	task    string
	level   *atomic.Int32
	bell    *uint32      // drainer's futex word, nil when draining by polling
	callers *atomic.Bool // record the call site: a Sink's own Logger, drained into a zap logger that shows callers
	busy    atomic.Uint32
	drops   atomic.Uint64
}

// NewLogger makes a Logger, threshold LevelInfo, that writes into ring
// (such as one in a segment another process drains). ErrInvalid if ring is
// nil or too small for a message.
func NewLogger(ring *ipc.RecordRing, task string) (*Logger, error) {
	if ring == nil {
		return nil, fmt.Errorf("msg: NewLogger: nil ring: %w", ErrInvalid)
	}
	if ring.MaxRecord() < maxRecordPayload {
		return nil, fmt.Errorf("msg: NewLogger: ring too small for one message: %w", ErrInvalid)
	}
	l := &Logger{ring: ring, task: task[:min(len(task), MaxTask)], level: new(atomic.Int32)}
	l.level.Store(int32(LevelInfo))
	return l, nil
}

// Task returns the task name the Logger stamps on its messages.
func (l *Logger) Task() string { return l.task }

// SetLevel sets the threshold (rtapi_set_msg_level); messages above it are
// discarded uncounted. A Sink's Loggers share the Sink's threshold.
// RT-safe.
func (l *Logger) SetLevel(lv Level) { l.level.Store(int32(lv)) }

// Level returns the threshold (rtapi_get_msg_level).
// RT-safe.
func (l *Logger) Level() Level { return Level(l.level.Load()) }

// Dropped returns how many messages this Logger dropped.
// RT-safe.
func (l *Logger) Dropped() uint64 {
	if l == nil {
		return 0
	}
	return l.drops.Load()
}

// Err logs at LevelErr.
// RT-safe.
func (l *Logger) Err(format string, args ...Arg) { l.print(LevelErr, format, args) }

// Warn logs at LevelWarn.
// RT-safe.
func (l *Logger) Warn(format string, args ...Arg) { l.print(LevelWarn, format, args) }

// Info logs at LevelInfo.
// RT-safe.
func (l *Logger) Info(format string, args ...Arg) { l.print(LevelInfo, format, args) }

// Dbg logs at LevelDbg.
// RT-safe.
func (l *Logger) Dbg(format string, args ...Arg) { l.print(LevelDbg, format, args) }

// Print logs at level lv (rtapi_print_msg); the drainer renders the fmt
// format later. Levels outside ERR..DBG are ignored. A Sink's Logger records
// the call site when the zap logger shows callers (zap.AddCaller), which
// costs more (docs/BENCHMARKS.md).
// RT-safe.
func (l *Logger) Print(lv Level, format string, args ...Arg) { l.print(lv, format, args) }

// print is called directly by each exported method: the call site is
// three frames up.
func (l *Logger) print(lv Level, format string, args []Arg) {
	if l == nil || lv < LevelErr || lv > LevelDbg || int32(lv) > l.level.Load() {
		return
	}
	if !l.busy.CompareAndSwap(0, 1) {
		l.drops.Add(1)
		return
	}
	var flags uint8
	if len(args) > MaxArgs {
		args = args[:MaxArgs]
		flags |= flagArgsDropped
	}
	if len(format) > MaxFormat {
		format = format[:MaxFormat]
		flags |= flagFormatCut
	}
	var pc [1]uintptr
	pcLen := 0
	if l.callers != nil && l.callers.Load() && runtime.Callers(3, pc[:]) == 1 {
		flags |= flagCaller
		pcLen = 8
	}
	n := len(args)
	b, err := l.ring.Reserve(recFixed + 9*n + len(l.task) + len(format) + pcLen)
	if err != nil {
		l.drops.Add(1)
		l.busy.Store(0)
		return
	}
	binary.LittleEndian.PutUint64(b[0:], uint64(time.Now().UnixNano()))
	b[8], b[9], b[10], b[11] = uint8(lv), uint8(n), flags, uint8(len(l.task))
	binary.LittleEndian.PutUint16(b[12:], uint16(len(format)))
	b[14], b[15] = 0, 0
	kinds := b[recFixed+8*n:]
	for i, a := range args {
		binary.LittleEndian.PutUint64(b[recFixed+8*i:], a.bits)
		kinds[i] = uint8(a.kind)
	}
	end := n + copy(kinds[n:], l.task)
	end += copy(kinds[end:], format)
	if pcLen > 0 {
		binary.LittleEndian.PutUint64(kinds[end:], uint64(pc[0]))
	}
	_ = l.ring.Commit()
	l.busy.Store(0)
	if l.bell != nil && atomic.LoadUint32(l.bell) == bellSleeping &&
		atomic.CompareAndSwapUint32(l.bell, bellSleeping, bellAwake) {
		_, _ = sys.FutexWake(l.bell, 1)
	}
}
