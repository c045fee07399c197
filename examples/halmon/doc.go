// Command halmon attaches to a running halhost (or any HAL host, given
// its keys) from another process and shows its threads' timing and its
// pins live, a halmeter / halshow analog. It reads both segments through
// one hal.View, read-only: it needs only read permission and cannot
// change the host (changes go through halcmd and the host's socket).
// The real-time threads never wait for it.
//
//	go run ./examples/halhost    # first, in one terminal
//	go run ./examples/halmon     # then in another; Ctrl-C to stop
//	go run ./examples/halmon -count 1    # one snapshot and exit
//	go run ./examples/halmon -pins-key 0x48414c44 -stats-key 0x48414c53  # halrun's
//
// Each pin is shown with its type, direction, live value and the signal
// it is on.
//
// When the host stops, dies or its segments are removed, halmon prints
// "host gone (pid N)", detaches, and waits; when a host is back on the
// keys it prints "host back (pid M)" and shows it. It exits 0 on Ctrl-C
// or after -count refreshes.
//
// Of the -rtapi.* flags it has those that name the host's segments:
// -rtapi.instance and -rtapi.shm-group (trust the group's segments, for a
// member run as another user than the host); the others are refused as
// unknown flags. It runs no real-time task, so it always opens the posix
// flavor without locking memory, whatever RTAPI_FLAVOR or
// RTAPI_LOCK_MEMORY say. Keys are shown and read in hex (0x48414c50), as
// segment names spell them; decimal and octal are read too.
package main
