//go:build !unix

package shm

import (
	"errors"
	"fmt"
)

// errUnsupported is every segment call's error without POSIX shared memory.
var errUnsupported = fmt.Errorf("shared memory needs a Unix system: %w", errors.ErrUnsupported)

// Create fails: no POSIX shared memory here.
func Create(o Options, key uint32, size int) (*Segment, error) { return nil, errUnsupported }

// New fails: no POSIX shared memory here.
func New(o Options, key uint32, size int) (*Segment, error) { return nil, errUnsupported }

// Attach fails: no POSIX shared memory here.
func Attach(o Options, key uint32) (*Segment, error) { return nil, errUnsupported }

// Exists fails: no POSIX shared memory here.
func Exists(o Options, key uint32) (bool, error) { return false, errUnsupported }

// Remove fails: no POSIX shared memory here.
func Remove(o Options, key uint32) error { return errUnsupported }

// Close does nothing: no segment can exist here.
func (s *Segment) Close() error { return nil }

// Delete does nothing: no segment can exist here.
func (s *Segment) Delete() error { return nil }

// Check fails: no POSIX shared memory here.
func (s *Segment) Check() error { return errUnsupported }

// Guard fails without calling f: no segment can exist here.
func (s *Segment) Guard(f func()) error { return errUnsupported }

func (s *Segment) guard(f func()) uintptr { f(); return 0 }

// Fault returns nil: no segment can exist here.
func (s *Segment) Fault(v any) *TruncatedError { return nil }

// Orphan fails: no POSIX shared memory here.
func (s *Segment) Orphan() error { return errUnsupported }

// Unlinked fails: no POSIX shared memory here.
func (s *Segment) Unlinked() (bool, error) { return false, errUnsupported }
