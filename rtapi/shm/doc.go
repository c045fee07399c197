// Package shm maps named POSIX shared-memory segments, the storage gortapi
// components share inside one process and across processes
// (rtapi_shmem_new / rtapi_shmem_getptr / rtapi_shmem_delete in LinuxCNC).
//
// A segment is the file <Dir>/gortapi-<instance>-<key as 8 hex digits>
// (Dir defaults to /dev/shm), starting with a 64-byte header that every
// attacher validates before it touches the data. An attach that finds the
// creator unfinished waits up to Options.AttachTimeout, then fails with
// ErrNotInitialised; a truncated, foreign-version or garbage file is refused
// (ErrTruncated, *VersionError, ErrCorrupt), never misread.
//
// Trust: attach decides on the open file, before reading a byte of it, and
// accepts only a regular file owned by this process's effective uid, root
// or a user in Options.AllowUIDs, or of the group Options.Group, that
// nobody else may write; anything else is an *OwnerError (ErrUntrusted).
// Created files are 0600, or 0660 with Options.Group, whatever the umask.
// docs/SECURITY.md has the threat model.
//
// Delete unlinks the name at once, as shm_unlink does: attached users keep
// their memory until they unmap it or die. The header's attach count is
// informational (Attached).
//
// Truncation: a writer of the file may shrink it, and touching the mapped
// pages past the new end raises SIGBUS. Check detects it and Guard turns the
// fault into a *TruncatedError (ErrTruncated); a real-time task touching the
// segment directly is not covered (docs/SECURITY.md, "Truncation").
//
// View maps a pointer-free Go type onto segment memory; a type holding
// pointers, slices, maps, strings, channels, functions or interfaces is
// refused with a *FieldError.
//
// Concurrency: a *Segment is safe for concurrent use. Creating, attaching,
// closing and deleting make system calls, may wait and allocate. Access to
// the mapped memory is plain memory access; with Options.Lock and
// Options.Prefault it never page-faults.
//
// Example (example_test.go) attaches one segment twice, as two processes
// would; rtapi's ExampleRT_ShmCreate maps a struct of ipc primitives onto one.
package shm
