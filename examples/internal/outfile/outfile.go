// Package outfile writes the files a tool's user names on its command line
// (-json FILE, -svg FILE, -histfile FILE, a capture, an execution trace)
// without following a symlink planted at the name or truncating a file
// the user did not mean. The tools often run as root, in directories
// others can write; where fs.protected_symlinks is 0 an os.Create there
// truncates whatever a planted symlink points at.
//
// Create writes into a new temporary file beside the name (O_EXCL, so it
// is never someone else's file); Commit syncs it and renames it over the
// name. rename(2) replaces a symlink or a hard link at the name instead of
// writing through it, and a reader never sees half a file. A character
// device or FIFO at the name (/dev/null, a pipe from mkfifo) is written
// in place, opened without following a symlink and without truncation.
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/errs"
)

// File is an output file being written. Write to it, then Commit to put it
// at its name, or Close to drop it. It is not safe for concurrent use.
type File struct {
	f    *os.File
	name string // the name the user gave
	tmp  string // the temporary file that Commit renames; "" when written in place
	done bool
}

// Create starts the output file name with permissions perm (before the
// umask) and returns it; nothing is at name until Commit. The error is an
// *fs.PathError naming name: the directory is not writable, or name is a
// directory or a block device (matching errs.Invalid).
func Create(name string, perm fs.FileMode) (*File, error) {
	switch w, err := how(name); {
	case err != nil:
		return nil, &fs.PathError{Op: "create", Path: name, Err: err}
	case w != renamed:
		return openInPlace(name, w)
	}
	dir, base := filepath.Split(name)
	if len(base) > 200 { // the temporary name stays within NAME_MAX
		base = base[:200]
	}
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		switch {
		case err == nil:
			return &File{f: f, name: name, tmp: tmp}, nil
		case !errors.Is(err, fs.ErrExist):
			return nil, &fs.PathError{Op: "create", Path: name, Err: unwrapPath(err)}
		}
	}
	return nil, &fs.PathError{Op: "create", Path: name, Err: errs.Exist}
}

// WriteFile writes data to the output file name, as Create, Write and
// Commit do.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, err := Create(name, perm)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// Name returns the name given to Create.
func (f *File) Name() string { return f.name }

// Write writes p to the file.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, os.ErrClosed
	}
	return f.f.Write(p)
}

// Commit syncs the file to disk and renames it over the name, then syncs
// the directory (best effort: some file systems refuse). On error nothing
// is left but what was at the name before. It returns os.ErrClosed after
// Commit or Close.
func (f *File) Commit() error {
	if f.done {
		return os.ErrClosed
	}
	f.done = true
	if f.tmp == "" {
		return f.f.Close()
	}
	err := f.f.Sync()
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp, f.name)
	}
	if err != nil {
		os.Remove(f.tmp)
		return &fs.PathError{Op: "write", Path: f.name, Err: unwrapPath(err)}
	}
	if d, err := os.Open(filepath.Dir(f.name)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Close drops a file not committed: it removes the temporary file and
// leaves the name as it was. After Commit it does nothing; it returns nil.
func (f *File) Close() error {
	if f.done {
		return nil
	}
	f.done = true
	f.f.Close()
	if f.tmp != "" {
		os.Remove(f.tmp)
	}
	return nil
}

// way is how an output file reaches its name.
type way int

const (
	renamed     way = iota // a temporary file renamed over the name
	inPlace                // a device or FIFO, opened without following
	inPlaceLink            // a symlink that only root could plant to a device or FIFO (/dev/stdout)
)

// how decides how name is written from what is at it now.
func how(name string) (way, error) {
	fi, err := os.Lstat(name)
	if err != nil {
		return renamed, nil // absent (or unreadable: creating the temporary file says why)
	}
	var dir, target fs.FileInfo
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ = os.Stat(name)
		dir, _ = os.Stat(filepath.Dir(name))
	}
	return decide(fi, dir, target)
}

// decide is how's decision: at is what Lstat says is at the name; for a
// symlink, dir is its directory and target what it points at (nil when
// dangling).
func decide(at, dir, target fs.FileInfo) (way, error) {
	switch t := at.Mode().Type(); {
	case t == 0:
		return renamed, nil // a regular file, maybe a hard link: replaced, not truncated
	case t&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
		return inPlace, nil
	case t&fs.ModeSymlink != 0:
		if target != nil && target.Mode().Type()&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0 && onlyRootWrites(dir) {
			return inPlaceLink, nil
		}
		return renamed, nil // replaced: a symlink is never followed
	case t&fs.ModeDir != 0:
		return 0, fmt.Errorf("%w: is a directory", errs.Invalid)
	default:
		return 0, fmt.Errorf("%w: not a regular file, character device or FIFO (%v)", errs.Invalid, t)
	}
}

// onlyRootWrites reports whether only root can add a name to dir: owned
// by root, not writable by group or others.
func onlyRootWrites(dir fs.FileInfo) bool {
	if dir == nil {
		return false
	}
	st, ok := dir.Sys().(*unix.Stat_t)
	if !ok {
		return false
	}
	return st.Uid == 0 && dir.Mode().Perm()&0o022 == 0
}

// openInPlace opens the device or FIFO at name for writing, without
// creating or truncating; through a symlink only for inPlaceLink.
func openInPlace(name string, w way) (*File, error) {
	flags := os.O_WRONLY | unix.O_CLOEXEC
	if w == inPlace {
		flags |= unix.O_NOFOLLOW
	}
	f, err := os.OpenFile(name, flags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: name, Err: unwrapPath(err)}
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Type()&(fs.ModeCharDevice|fs.ModeNamedPipe) == 0 {
		err = fmt.Errorf("%w: changed under us to %v", errs.Invalid, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "create", Path: name, Err: unwrapPath(err)}
	}
	return &File{f: f, name: name}, nil
}

// unwrapPath returns the error inside a *fs.PathError or *os.LinkError, so
// that the caller's error names the user's file and not the temporary one.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
