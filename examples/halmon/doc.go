// Command halmon attaches to a running halhost from another process and
// shows its pins and its threads' timing live, a halmeter / halshow
// analog. It reads through seqlocks: the real-time threads never wait for
// it, and it never sees a half-written value.
//
//	go run ./examples/halhost    # first, in one terminal
//	go run ./examples/halmon     # then in another; Ctrl-C to stop
//	go run ./examples/halmon -count 1    # one snapshot and exit
//
// Each pin is shown twice: as the servo thread's last frame had it (one
// cycle's values together, through the seqlock) and as it reads now.
//
// It exits 0 on Ctrl-C, after -count refreshes, or when halhost stops
// (it notices the host closing its segments or dying), and detaches so
// the segments are freed.
//
// Of the -rtapi.* flags (and RTAPI_* variables) it uses those that name
// halhost's segments: -rtapi.instance and -rtapi.shm-group. It runs no
// real-time task, so it always opens the posix flavor without locking
// memory, whatever -rtapi.flavor or -rtapi.lock-memory say.
package main
