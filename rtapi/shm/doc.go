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
// Trust. A segment is input from whoever may write its file, so attach
// decides on the open file (fstat, before reading a byte or waiting on its
// lock) whether those writers are trusted: the file must be a regular file
// owned by this process's effective uid, by root, by a user in
// Options.AllowUIDs or, when Options.Group is set, be of that group; nobody
// else may have write permission (no "others" write bit, no group write bit
// for another group). Anything else is refused with an *OwnerError
// (ErrUntrusted, os.ErrPermission) that names owner, mode and the remedy.
// Created files are 0600, or 0660 with Options.Group, set with fchmod so the
// umask does not change them. docs/SECURITY.md has the threat model.
//
// Every attachment holds a shared flock(2) on its own open file description.
// The kernel drops it when the process dies. Delete unlinks the name at
// once, as shm_unlink does: users still attached keep their memory, the
// kernel frees it when the last of them unmaps it or dies, and nothing is
// left in /dev/shm even when that user is SIGKILLed. The attach count in
// the header is informational (Attached) and may overcount after a crash.
//
// Truncation. A writer of the file may also shrink it; touching the mapped
// pages past the new end raises SIGBUS, which kills a Go program. Attach
// checks the file's size, Check compares it with the mapping, and Guard runs
// reading code with such a fault turned into a *TruncatedError
// (ErrTruncated). A real-time task touching a truncated segment directly is
// not contained: the process dies.
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
//
// Example (example_test.go) attaches one segment twice, as two processes
// would; rtapi's ExampleRT_ShmCreate maps a struct of ipc primitives onto one.
package shm
