// Package ipc holds the synchronisation primitives gortapi components use
// through shared memory: a mutex that detects a dead owner, a counting
// semaphore, single-producer single-consumer ring buffers (record mode and
// stream mode) and a seqlock for snapshots.
//
// Every primitive is plain memory plus atomics and futexes, with no
// process-local pointers inside, so it works the same way between two
// goroutines of one process and between processes that map the same
// segment (package rtapi/shm). Mutex, Semaphore and Seqlock are pointer-free
// types meant to be embedded in a struct that is mapped onto a segment with
// shm.View; their zero value is ready to use. Rings have a size chosen at run
// time, so they live in a byte region: InitRecordRing/InitStreamRing lay a
// ring out in memory once, OpenRecordRing/OpenStreamRing validate and attach
// to it, and each returns a small process-local handle.
//
// Shared memory is untrusted: any process that maps it may write any value
// at any time. A ring handle keeps its geometry (capacity, mask) and its own
// side's position in process-private memory, loads each shared index and
// record header once, checks it against that geometry, and reports a bad
// value as ErrCorrupt (counted in CorruptEvents), never reading or writing
// outside the ring and never looping without bound. Seqlock.ReadBounded
// bounds a read against a writer that never stops; a Mutex word naming no
// process counts as a dead owner.
//
// Futex words use the shared (not PRIVATE) futex operations, so waiters in
// other processes are woken.
//
// A method whose doc ends with "RT-safe." (as package rtapi defines it) may
// be called from a task body: Mutex.TryLock and Unlock, Semaphore.Give and
// TryTake, the ring writers and readers, Seqlock's Write and reads. Calls
// that can block (Mutex.Lock, Semaphore.Take, ring Wait) are for non-RT
// goroutines or for RT tasks that accept blocking. Errors returned from
// RT-safe calls are pre-built sentinels, so returning them does not
// allocate either.
//
// PIMutex is the priority-inheritance variant (FUTEX_LOCK_PI): its holder
// runs at the priority of its highest waiter, so a SCHED_FIFO task waiting
// behind a lower-priority holder is not starved by the tasks in between. It
// belongs to a thread, and keeps the holding goroutine locked to it.
//
// Limits: a dead mutex owner is detected by its pid, so a pid reused by an
// unrelated process, or an owner that died but was not yet reaped (a zombie),
// reads as alive; processes must share a pid namespace.
//
// ExampleRecordRingAt (example_test.go) runs a record ring in a segment,
// ExampleSemaphore a semaphore; rtapi's ExampleRT_ShmCreate embeds a Mutex and a
// Seqlock in a struct mapped with shm.View.
package ipc
