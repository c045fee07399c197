// Package msg is gortapi's real-time message logger, the analog of
// rtapi_print_msg and rtapi_msgd.
//
// A task body logs through a *Logger with a constant format string and a few
// numeric arguments (Int, Uint, Float, Bool):
//
//	log.Warn("overrun %d, late by %.1f µs", msg.Int(n), msg.Float(us))
//
// The call copies the level, a wall-clock timestamp, the arguments, the task
// name and the format bytes into an SPSC record ring (package rtapi/ipc) and
// returns. It never allocates, never takes a lock, never blocks and never
// makes a system call, except one FUTEX_WAKE when the drainer sleeps. When
// the ring is full, or when two goroutines use one Logger at the same time,
// the message is dropped and counted (Dropped).
//
// A Sink owns the rings of its Loggers and drains them in a non-RT goroutine
// (Sink.Drain) into a zap.Logger: ERR, WARN, INFO and DBG map to zap's
// Error, Warn, Info and Debug levels, the entry time is the time of the RT
// call, and the task name is the "task" field. The entry's caller is the
// task's call site (when the zap logger adds callers) and it has no stack
// trace: the one zap would take is the drainer's. Formatting (fmt.Sprintf)
// happens there, not in the task. A ring may also live in a shared-memory
// segment (NewLogger over an ipc.RecordRing in the segment): another process
// then drains it with its own Sink (AddRing).
//
// A ring in a segment is written by another process and so untrusted. The
// Sink copies each record before decoding it, decodes and formats it only
// when the zap logger's level takes it, and bounds what it renders (plain
// fmt syntax only, no width or precision above 64, no '*', at most MaxText
// bytes, control characters escaped so one message is one line). It writes
// at most DefaultRateLimit messages a second per ring (Sink.RateLimit) and
// counts and reports the rest. A damaged ring, or one whose segment was
// truncated, is skipped (its content dropped) and left alone for a
// back-off of up to a second, counted in Sink.Damaged and reported at most
// once a second. A hostile writer can feed wrong messages, not flood the
// log, forge a log line or keep the drainer busy.
//
// Limits: at most MaxArgs arguments (extra ones are dropped and the message
// is marked), format strings longer than MaxFormat bytes and task names
// longer than MaxTask bytes are cut.
//
// Example (example_test.go) logs from a loop without allocating and drains
// into zap; rtapi.RT.MsgLogger does the draining for a host.
package msg
