package shm

import (
	"errors"
	"fmt"
	"os"
)

// Sentinel errors. Typed errors below match them with errors.Is.
var (
	// ErrInvalid reports a bad argument: a negative or too large size, a
	// misaligned or out-of-range view, a type that cannot live in shared
	// memory.
	ErrInvalid = errors.New("shm: invalid argument")
	// ErrNotExist reports that no segment with that key exists. It matches
	// os.ErrNotExist too.
	ErrNotExist = fmt.Errorf("shm: segment does not exist: %w", os.ErrNotExist)
	// ErrExist reports that Create found a segment already there. It
	// matches os.ErrExist too.
	ErrExist = fmt.Errorf("shm: segment already exists: %w", os.ErrExist)
	// ErrSizeMismatch is matched by *SizeMismatchError.
	ErrSizeMismatch = errors.New("shm: segment exists with another size")
	// ErrNotInitialised reports a segment whose creator never finished
	// initialising it within Options.AttachTimeout (still creating, or it
	// died half-way).
	ErrNotInitialised = errors.New("shm: segment not initialised")
	// ErrTruncated reports a segment file shorter than its header says.
	ErrTruncated = errors.New("shm: segment file truncated")
	// ErrCorrupt reports a segment file whose header is not a gortapi
	// header (bad magic, impossible size, wrong key).
	ErrCorrupt = errors.New("shm: segment header corrupt")
	// ErrVersion is matched by *VersionError.
	ErrVersion = errors.New("shm: segment layout version not supported")
	// ErrClosed reports use of a segment after Close or Delete. It is
	// os.ErrClosed.
	ErrClosed = os.ErrClosed
)

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

// Is matches ErrSizeMismatch.
func (e *SizeMismatchError) Is(target error) bool { return target == ErrSizeMismatch }

// VersionError reports a segment written with another header layout version.
type VersionError struct {
	Name  string
	Found uint32
	Want  uint32
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("shm: segment %s has layout version %d, this build reads version %d", e.Name, e.Found, e.Want)
}

// Is matches ErrVersion.
func (e *VersionError) Is(target error) bool { return target == ErrVersion }

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

// Is matches ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }
