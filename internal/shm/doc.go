// Package shm maps named POSIX shared-memory segments, the storage that
// gortapi components share inside one process and across processes
// (rtapi_shmem_new / rtapi_shmem_getptr / rtapi_shmem_delete in LinuxCNC).
//
// A segment is the file <Dir>/gortapi-<instance>-<key as 8 hex digits>
// (Dir defaults to /dev/shm, so the POSIX name is
// "/gortapi-<instance>-<key>", as Machinekit names "/hal-<instance>-<key>").
// The file starts with a 64-byte header that every attacher validates before
// it touches the data: magic, layout version, data size, creator pid, attach
// count and an "initialised" word that the creator stores last. A reader that
// opens the file before the creator finished waits (up to
// Options.AttachTimeout) and then fails with ErrNotInitialised; a truncated
// file, a file of another layout version or one overwritten with garbage is
// refused with ErrTruncated, *VersionError or ErrCorrupt — never misread.
//
// Every attachment holds a shared flock(2) on its own open file description.
// The kernel drops it when the process dies, so "is this the last user?" is
// answered by the kernel, not by a counter a SIGKILLed process could leave
// behind: Delete unlinks the name at once when the caller is the last user
// and otherwise marks the segment so that the last Close unlinks it. The
// attach count in the header is informational (Attached) and may overcount
// after a crash.
//
// Views map pointer-free Go types onto segment memory (View, CheckPointerFree).
// The garbage collector cannot see into shared memory and another process
// cannot follow this process's pointers, so a type with pointers, slices,
// maps, strings, channels, functions or interfaces is refused with an error
// naming the offending field. Reflection runs only when a view is created.
//
// Concurrency: a *Segment is safe for concurrent use; Bytes and the views it
// hands out stay valid until Close or Delete. Creating, attaching, closing and
// deleting do system calls, may wait and allocate: call them at set-up and
// tear-down, never from a real-time task body. Reading and writing the mapped
// memory is ordinary memory access and is RT-safe; with Options.Lock and
// Options.Prefault the pages are resident and locked so that access never
// faults.
package shm
