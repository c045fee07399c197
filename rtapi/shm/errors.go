package shm

import (
	"fmt"
	"os"

	"github.com/gortapi/gortapi/internal/errs"
)

// Sentinel errors; the typed errors below match them, and each matches the
// rtapi sentinel named on it too.
var (
	// ErrInvalid reports a bad argument: a size, a view, a type.
	ErrInvalid = errs.Invalid
	// ErrNotExist reports no segment with that key (os.ErrNotExist).
	ErrNotExist = fmt.Errorf("shm: segment does not exist: %w", errs.NotExist)
	// ErrExist reports that Create found the key in use (os.ErrExist).
	ErrExist = fmt.Errorf("shm: segment already exists: %w", errs.Exist)
	// ErrSizeMismatch is matched by *SizeMismatchError (ErrInvalid).
	ErrSizeMismatch = fmt.Errorf("shm: segment exists with another size: %w", errs.Invalid)
	// ErrNotInitialised reports a segment whose creator did not finish
	// within Options.AttachTimeout (rtapi.ErrBusy): retry, or remove it if
	// the creator died.
	ErrNotInitialised = fmt.Errorf("shm: segment not initialised: %w", errs.Busy)
	// ErrTruncated reports a file shorter than its header or mapping
	// (rtapi.ErrCorrupt).
	ErrTruncated = fmt.Errorf("shm: segment file truncated: %w", errs.Corrupt)
	// ErrCorrupt reports a file whose header is not a valid gortapi header
	// (rtapi.ErrCorrupt).
	ErrCorrupt = fmt.Errorf("shm: segment header corrupt: %w", errs.Corrupt)
	// ErrVersion is matched by *VersionError (rtapi.ErrNotSupported).
	ErrVersion = fmt.Errorf("shm: segment layout version: %w", errs.NotSupported)
	// ErrClosed is os.ErrClosed: use after Close or Delete.
	ErrClosed = errs.Closed
	// ErrUntrusted is matched by *OwnerError (os.ErrPermission).
	ErrUntrusted = fmt.Errorf("shm: segment not trusted: %w", errs.Permission)
)

// OwnerError reports a segment file refused on attach because someone this
// process does not trust owns it or may write it, or it is not a regular
// file (package doc, "Trust").
type OwnerError struct {
	Name   string      // segment name, e.g. "/gortapi-0-0000abcd"
	Path   string      // the file
	UID    int         // the file's owner
	GID    int         // the file's group
	Mode   os.FileMode // the file's type and permission bits
	EUID   int         // this process's effective uid
	Reason string      // what is wrong, e.g. "it is owned by uid 65534"
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("shm: refusing segment %s: %s (file %s: owner uid %d, group %d, mode %04o; this process runs as uid %d); "+
		"if it is stale or was not made by you, remove it (rm %s) and let the host create it again (mode 0600), "+
		"or, to share it on purpose, create it with Options.Group and mode 0660 and give the same Group (or Options.AllowUIDs) to every user",
		e.Name, e.Reason, e.Path, e.UID, e.GID, e.Mode.Perm(), e.EUID, e.Path)
}

// Unwrap gives ErrUntrusted, which matches os.ErrPermission.
func (e *OwnerError) Unwrap() error { return ErrUntrusted }

// ExistError reports that Create found the key in use, by a running or a
// crashed creator. It matches ErrExist.
type ExistError struct {
	Name       string // segment name, e.g. "/gortapi-0-0000abcd"
	Path       string // the file
	CreatorPID int    // pid in the existing segment's header; 0 if unreadable
	Running    bool   // whether that process exists now
}

func (e *ExistError) Error() string {
	switch {
	case e.CreatorPID > 0 && e.Running:
		return fmt.Sprintf("shm: segment %s already exists, created by pid %d, which is running: another instance is using it", e.Name, e.CreatorPID)
	case e.CreatorPID > 0:
		return fmt.Sprintf("shm: segment %s already exists, left by pid %d, which is gone; remove it (rm %s) if it is stale", e.Name, e.CreatorPID, e.Path)
	}
	return fmt.Sprintf("shm: segment %s already exists (file %s)", e.Name, e.Path)
}

// Unwrap gives ErrExist (and so os.ErrExist).
func (e *ExistError) Unwrap() error { return ErrExist }

// TruncatedError reports a file shrunk under its mapping: an access past
// the new end faulted (Guard) or would fault (Check).
type TruncatedError struct {
	Name     string
	FileSize int64   // the file's size now; -1 when it could not be read
	Mapped   int     // the bytes this attachment mapped (header included)
	Fault    uintptr // the faulting address, 0 when nothing faulted
}

func (e *TruncatedError) Error() string {
	s := fmt.Sprintf("shm: segment %s was truncated under its mapping: the file holds %d bytes, %d are mapped", e.Name, e.FileSize, e.Mapped)
	if e.Fault != 0 {
		s += fmt.Sprintf("; access at %#x faulted", e.Fault)
	}
	return s
}

// Unwrap gives ErrTruncated (and so rtapi.ErrCorrupt).
func (e *TruncatedError) Unwrap() error { return ErrTruncated }

// SizeMismatchError reports a create-or-attach of an existing key with a
// different size.
type SizeMismatchError struct {
	Name      string // segment name, e.g. "/gortapi-0-0000abcd"
	Existing  int    // data size of the segment that exists
	Requested int    // data size the caller asked for
}

func (e *SizeMismatchError) Error() string {
	return fmt.Sprintf("shm: segment %s exists with size %d, requested size %d", e.Name, e.Existing, e.Requested)
}

// Unwrap gives ErrSizeMismatch (and so ErrInvalid).
func (e *SizeMismatchError) Unwrap() error { return ErrSizeMismatch }

// VersionError reports a segment written with another header layout version.
type VersionError struct {
	Name  string
	Found uint32
	Want  uint32
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("shm: segment %s has layout version %d, this build reads version %d", e.Name, e.Found, e.Want)
}

// Unwrap gives ErrVersion (and so rtapi.ErrNotSupported).
func (e *VersionError) Unwrap() error { return ErrVersion }

// FieldError names a field that cannot live in shared memory.
type FieldError struct {
	Type  string // the type a view was asked for
	Field string // path of the offending field, e.g. "Servo.Name"
	Kind  string // its kind: "string", "pointer", "slice", ...
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("shm: type %s is a %s and cannot live in shared memory", e.Type, e.Kind)
	}
	return fmt.Sprintf("shm: type %s cannot live in shared memory: field %s is a %s", e.Type, e.Field, e.Kind)
}

// Unwrap gives ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }
