package rtapi

import (
	"context"
	"fmt"

	"github.com/gortapi/gortapi/internal/rtlog"
)

// RT-safe messages (rtapi_print_msg and rtapi_msgd). A task body logs
// through its *MsgLogger; a non-RT goroutine of this RT drains the rings
// into Options.Logger (zap) with matching levels, the task name as the
// "task" field and the time of the call as the entry time.
//
//	log, err := rt.MsgLogger("servo")            // set-up
//	...
//	log.Warn("following error %.3f mm at cycle %d", rtapi.Float(fe), rtapi.Int(n)) // in the body
type (
	// MsgLogger is one task's message writer. Err, Warn, Info, Dbg and
	// Print are RT-safe: no allocation, no lock, never block; a full ring
	// drops the message and counts it (Dropped), and the drainer reports
	// drops as a WARN entry. A nil *MsgLogger drops everything silently.
	MsgLogger = rtlog.Logger
	// MsgLevel is a message level (msg_level_t).
	MsgLevel = rtlog.Level
	// MsgArg is one numeric message argument; build it with Int, Uint,
	// Float or Bool.
	MsgArg = rtlog.Arg
)

// Message levels, as RTAPI numbers them. The threshold passes messages at
// or below it; the default is MsgInfo.
const (
	MsgNone = rtlog.LevelNone // RTAPI_MSG_NONE
	MsgErr  = rtlog.LevelErr  // RTAPI_MSG_ERR
	MsgWarn = rtlog.LevelWarn // RTAPI_MSG_WARN
	MsgInfo = rtlog.LevelInfo // RTAPI_MSG_INFO
	MsgDbg  = rtlog.LevelDbg  // RTAPI_MSG_DBG
	MsgAll  = rtlog.LevelAll  // RTAPI_MSG_ALL
)

// Int makes a signed integer message argument (time.Duration too). RT-safe.
func Int[T rtlog.Integer](v T) MsgArg { return rtlog.Int(v) }

// Uint makes an unsigned integer message argument. RT-safe.
func Uint[T rtlog.Unsigned](v T) MsgArg { return rtlog.Uint(v) }

// Float makes a floating-point message argument. RT-safe.
func Float[T ~float32 | ~float64](v T) MsgArg { return rtlog.Float(v) }

// Bool makes a boolean message argument. RT-safe.
func Bool(v bool) MsgArg { return rtlog.Bool(v) }

// msgState is one RT's sink and drainer. It lives in a registry keyed by
// the RT so that this file needs no field in RT.
type msgState struct {
	sink   *rtlog.Sink
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// messages returns rt's sink, starting the drainer on first use.
func (rt *RT) messages() (*msgState, error) {
	rt.msgMu.Lock()
	defer rt.msgMu.Unlock()
	if rt.msg != nil {
		return rt.msg, nil
	}
	if rt.isClosed() {
		return nil, ErrClosed
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &msgState{sink: rtlog.NewSink(MsgInfo), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(st.done)
		st.err = st.sink.Drain(ctx, rt.logger)
	}()
	rt.msg = st
	return st, nil
}

// MsgLogger returns a new message writer for task, with its own ring of
// 64 KiB. Give each task its own. The first call starts this RT's drainer
// goroutine.
func (rt *RT) MsgLogger(task string) (*MsgLogger, error) {
	st, err := rt.messages()
	if err != nil {
		return nil, fmt.Errorf("rtapi.MsgLogger(%q): %w", task, err)
	}
	l, err := st.sink.Logger(task, 0)
	if err != nil {
		return nil, fmt.Errorf("rtapi.MsgLogger(%q): %w", task, err)
	}
	return l, nil
}

// SetMsgLevel sets the threshold of every MsgLogger of this RT
// (rtapi_set_msg_level).
func (rt *RT) SetMsgLevel(lv MsgLevel) error {
	if lv < MsgNone || lv > MsgAll {
		return fmt.Errorf("rtapi.SetMsgLevel(%d): level outside NONE..ALL: %w", lv, ErrInvalid)
	}
	st, err := rt.messages()
	if err != nil {
		return fmt.Errorf("rtapi.SetMsgLevel: %w", err)
	}
	st.sink.SetLevel(lv)
	return nil
}

// MsgLevel returns the threshold (rtapi_get_msg_level).
func (rt *RT) MsgLevel() MsgLevel {
	rt.msgMu.Lock()
	defer rt.msgMu.Unlock()
	if rt.msg != nil {
		return rt.msg.sink.Level()
	}
	return MsgInfo
}

// ShmMsgLogger returns a message writer over a record ring at [off,
// off+size) of seg, for a process that another process drains (with
// DrainShmMessages). Its threshold is its own (SetLevel), MsgInfo at
// first.
func (rt *RT) ShmMsgLogger(seg *Segment, off, size int, task string) (*MsgLogger, error) {
	ring, err := seg.RecordRing(off, size)
	if err != nil {
		return nil, fmt.Errorf("rtapi.ShmMsgLogger(%q): %w", task, err)
	}
	l, err := rtlog.NewLogger(ring, task)
	if err != nil {
		return nil, fmt.Errorf("rtapi.ShmMsgLogger(%q): %w (%w)", task, err, ErrInvalid)
	}
	return l, nil
}

// DrainShmMessages makes this RT's drainer also read the message ring at
// [off, off+size) of seg, written by a ShmMsgLogger in another process
// (the rtapi_msgd role). task names the ring in drop reports. The drainer
// polls such rings every 20 ms. Call stop before closing seg: once it
// returns, the drainer no longer touches the segment.
//
// The ring is untrusted: if the other process (or anyone who can write the
// segment) damages it, the drainer drops what it holds, leaves it alone for
// a back-off of up to a second and logs one ERROR entry a second at most;
// message text taken from it is bounded (see the rtlog package).
func (rt *RT) DrainShmMessages(seg *Segment, off, size int, task string) (stop func(), err error) {
	ring, err := seg.RecordRing(off, size)
	if err != nil {
		return nil, fmt.Errorf("rtapi.DrainShmMessages(%q): %w", task, err)
	}
	st, err := rt.messages()
	if err != nil {
		return nil, fmt.Errorf("rtapi.DrainShmMessages(%q): %w", task, err)
	}
	if err := st.sink.AddRing(ring, task); err != nil {
		return nil, err
	}
	return func() { st.sink.RemoveRing(ring) }, nil
}

// closeMessages stops the drainer after it has written what the rings
// hold. RT.Close must call it; later MsgLogger calls return ErrClosed.
func (rt *RT) closeMessages() error {
	rt.msgMu.Lock()
	st := rt.msg
	rt.msg = nil
	rt.msgMu.Unlock()
	if st == nil {
		return nil
	}
	st.cancel()
	<-st.done
	return st.err
}
