package rtapi

import (
	"context"
	"fmt"

	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/msg"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// msgState is one RT's message sink and drainer (package rtapi/msg).
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
// its own 64 KiB ring, which this RT drains into Options.Logger at the
// message's level, with a "task" field, the call's time and call site.
//
//	log, err := rt.MsgLogger("servo") // set-up
//	...
//	log.Warn("following error %.3f mm at cycle %d", msg.Float(fe), msg.Int(n)) // in the body
//
// The body may call the Logger's methods; at most they make one
// FUTEX_WAKE of the drainer. Give each task its own Logger: one
// used by two goroutines at once drops messages (counted in Dropped), as
// does a full ring. MsgLogger allocates, and its first call starts the
// drainer, which Close stops after writing what the rings hold. After
// Close it returns ErrClosed.
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
// (rtapi_set_msg_level): messages at or below it pass; msg.LevelInfo by
// default. Outside msg.LevelNone..msg.LevelAll: ErrInvalid; after Close,
// ErrClosed.
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
// off+size) of seg, for another process to drain (DrainShmMessages). Its
// threshold is its own, msg.LevelInfo at first.
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

// DrainShmMessages makes this RT's drainer also poll, every 20 ms
// (msg.DefaultPollInterval), the message ring at [off, off+size) of seg,
// written by a ShmMsgLogger in another process (rtapi_msgd). task names
// the ring in drop reports. Call stop before closing seg; once it returns,
// the drainer no longer touches it.
//
// The ring is untrusted: a damaged one is emptied and left alone for up to
// a second, with at most one ERROR entry a second; text taken from it is
// bounded (package rtapi/msg).
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
// hold; RT.Close calls it.
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
