package rtapi

import (
	"context"
	"fmt"

	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/msg"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// RT-safe messages (rtapi_print_msg and rtapi_msgd): the contract is in
// MsgLogger's doc; the logger and its sink are package rtapi/msg.

// msgState is one RT's sink and drainer. It lives in a registry keyed by
// the RT so that this file needs no field in RT.
type msgState struct {
	sink   *msg.Sink
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
	st := &msgState{sink: msg.NewSink(msg.LevelInfo), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(st.done)
		st.err = st.sink.Drain(ctx, rt.logger)
	}()
	rt.msg = st
	return st, nil
}

// MsgLogger returns a new message writer for task (rtapi_print_msg), with
// its own ring of 64 KiB, drained by this RT into Options.Logger: zap's
// level matching the message's, the task name as the "task" field, the
// time of the call as the entry time and the body's call site as the
// caller.
//
//	log, err := rt.MsgLogger("servo") // set-up
//	...
//	log.Warn("following error %.3f mm at cycle %d", msg.Float(fe), msg.Int(n)) // in the body
//
// The Logger's methods (Err, Warn, Info, Dbg, Print) may be called from
// the body: at most they make one FUTEX_WAKE of the drainer. Give each
// task its own Logger: one used by two goroutines at once drops messages
// (counted in Dropped), as does a full ring. MsgLogger itself is set-up
// code: it allocates the ring, and its first call starts this RT's
// drainer goroutine, which Close stops after writing what the rings hold.
// After Close it returns ErrClosed.
func (rt *RT) MsgLogger(task string) (*msg.Logger, error) {
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
// (rtapi_set_msg_level), from the next message on. The threshold passes
// messages at or below it; the default is msg.LevelInfo. A level outside
// msg.LevelNone..msg.LevelAll is ErrInvalid; after Close, ErrClosed.
func (rt *RT) SetMsgLevel(lv msg.Level) error {
	if lv < msg.LevelNone || lv > msg.LevelAll {
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
func (rt *RT) MsgLevel() msg.Level {
	rt.msgMu.Lock()
	defer rt.msgMu.Unlock()
	if rt.msg != nil {
		return rt.msg.sink.Level()
	}
	return msg.LevelInfo
}

// ShmMsgLogger returns a message writer over a record ring at [off,
// off+size) of seg, for a process that another process drains (with
// DrainShmMessages). Its threshold is its own (SetLevel), msg.LevelInfo at
// first.
func (rt *RT) ShmMsgLogger(seg *shm.Segment, off, size int, task string) (*msg.Logger, error) {
	ring, err := ipc.RecordRingAt(seg, off, size)
	if err != nil {
		return nil, fmt.Errorf("rtapi.ShmMsgLogger(%q): %w", task, err)
	}
	l, err := msg.NewLogger(ring, task)
	if err != nil {
		return nil, fmt.Errorf("rtapi.ShmMsgLogger(%q): %w", task, err)
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
// message text taken from it is bounded (see package rtapi/msg).
func (rt *RT) DrainShmMessages(seg *shm.Segment, off, size int, task string) (stop func(), err error) {
	ring, err := ipc.RecordRingAt(seg, off, size)
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
