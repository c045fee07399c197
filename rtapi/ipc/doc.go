// Package ipc holds the synchronisation primitives gortapi components use
// through shared memory: a mutex that detects a dead owner (Mutex), its
// priority-inheritance variant (PIMutex), a counting semaphore, single-producer
// single-consumer ring buffers (record and stream mode) and a seqlock.
//
// Every primitive is plain memory plus atomics and shared futexes, with no
// process-local pointers, so it works the same between goroutines of one
// process and between processes that map one segment (package rtapi/shm).
// Mutex, PIMutex, Semaphore and Seqlock are pointer-free types to embed in a
// struct mapped with shm.View; their zero value is ready to use. A ring is
// laid out in a byte region by InitRecordRing/InitStreamRing and attached
// with OpenRecordRing/OpenStreamRing, each returning a process-local handle.
//
// Shared memory is untrusted: any process that maps it may write any value at
// any time. No such value makes a call read or write outside the primitive's
// memory or panic; each type's doc says what it checks, and which calls a
// hostile writer can keep waiting (docs/SECURITY.md, "Rings and messages").
//
// A method whose doc ends with "RT-safe." (as package rtapi defines it) may be
// called from a task body; Mutex.Lock, Semaphore.Take and ring Wait block.
// Errors returned from RT-safe calls are pre-built sentinels.
//
// Limits: a dead mutex owner is detected by its pid, so a reused pid or an
// unreaped zombie reads as alive; processes must share a pid namespace.
//
// ExampleRecordRingAt and ExampleSemaphore (example_test.go) show a ring in a
// segment and a semaphore; rtapi's ExampleRT_ShmCreate embeds a Mutex and a
// Seqlock in a struct mapped with shm.View.
package ipc
