// Package pins is the pin table halhost's components share and halmon
// reads: named float64 pins in a shared-memory segment, each written by
// one function (as HAL pins are), and a frame of all pin values published
// through a seqlock once per servo cycle, so a reader in another process
// always sees one cycle's values together and never makes the real-time
// side wait.
//
// Set-up (Create, Attach, Pin, Close, Delete) allocates and does system
// calls: call it from ordinary goroutines. Pin.Get, Pin.Set and
// Table.Publish are RT-safe: atomic loads and stores, no allocation.
package pins
