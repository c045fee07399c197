// Package msg is gortapi's real-time message logger, the analog of
// rtapi_print_msg and rtapi_msgd.
//
// A task body logs through a *Logger with a constant format string and a few
// numeric arguments (Int, Uint, Float, Bool):
//
//	log.Warn("overrun %d, late by %.1f µs", msg.Int(n), msg.Float(us))
//
// The call copies the level, a wall-clock timestamp, the arguments, the task
// name and the format into a record ring (package rtapi/ipc) and returns. It
// never allocates, locks or blocks, and makes a system call only to wake a
// sleeping drainer. A message that finds the ring full, or the Logger in use
// by another goroutine, is dropped and counted (Dropped).
//
// A Sink drains its Loggers' rings in a non-RT goroutine (Sink.Drain) into a
// zap.Logger: ERR, WARN, INFO and DBG map to zap's levels, the entry time is
// the RT call's, the task name is the "task" field, and formatting happens
// there. A ring in a shared-memory segment is drained by another process's
// Sink (AddRing).
//
// Such a ring is untrusted. The Sink copies each record before checking it,
// formats only what zl's level and the rate limit (DefaultRateLimit a second
// per ring) let through, and renders bounded, one-line text (Message.Text). A
// damaged or truncated ring is skipped, backed off and reported at most once
// a second. A hostile writer can feed wrong messages, but not flood the log,
// forge a log line or keep the drainer busy (docs/SECURITY.md, "Rings and
// messages").
//
// Limits: at most MaxArgs arguments (extra ones are dropped and the message
// marked); formats over MaxFormat bytes and task names over MaxTask bytes
// are cut.
//
// Example (example_test.go) logs from a loop without allocating and drains
// into zap; rtapi.RT.MsgLogger does the draining for a host.
package msg
