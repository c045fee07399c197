//go:build unix

package shm

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/sys"
)

// Create creates a segment of size data bytes, or fails with an
// *ExistError (ErrExist) naming the creator when the key is in use: how a
// sole writer refuses to start twice. A full filesystem is an error matching
// syscall.ENOSPC, never a fault later.
func Create(o Options, key uint32, size int) (*Segment, error) {
	if err := checkNew(&o, size); err != nil {
		return nil, err
	}
	return create(&o, key, size)
}

// New creates a segment of size data bytes, or attaches to it when the key
// exists with the same size (rtapi_shmem_new); Segment.Created tells which.
// Another size is a *SizeMismatchError; a damaged segment ErrTruncated,
// ErrCorrupt or *VersionError; a full filesystem ENOSPC.
func New(o Options, key uint32, size int) (*Segment, error) {
	if err := checkNew(&o, size); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(o.attachTimeout())
	for {
		s, err := create(&o, key, size)
		if !errors.Is(err, ErrExist) {
			return s, err
		}
		s, err = attach(&o, key, size, deadline)
		if errors.Is(err, ErrNotExist) && time.Now().Before(deadline) {
			continue // deleted between our create and attach: create again
		}
		return s, err
	}
}

// Attach attaches to an existing segment of any size; ErrNotExist when there
// is none.
func Attach(o Options, key uint32) (*Segment, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return attach(&o, key, -1, time.Now().Add(o.attachTimeout()))
}

// Exists reports whether a segment file for key exists. It does not validate
// the file.
func Exists(o Options, key uint32) (bool, error) {
	if err := o.check(); err != nil {
		return false, err
	}
	var st unix.Stat_t
	err := unix.Stat(o.Path(key), &st)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENOENT):
		return false, nil
	}
	return false, &os.PathError{Op: "stat", Path: o.Path(key), Err: err}
}

// Remove unlinks the segment's name at once, whoever is attached; existing
// mappings stay valid. ErrNotExist when there is none.
func Remove(o Options, key uint32) error {
	if err := o.check(); err != nil {
		return err
	}
	if err := unix.Unlink(o.Path(key)); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("remove %s: %w", Name(o.Instance, key), ErrNotExist)
		}
		return &os.PathError{Op: "unlink", Path: o.Path(key), Err: err}
	}
	return nil
}

func create(o *Options, key uint32, size int) (*Segment, error) {
	path := o.Path(key)
	name := Name(o.Instance, key)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, o.mode())
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			pid := creatorOf(path)
			return nil, &ExistError{Name: name, Path: path, CreatorPID: pid, Running: sys.ProcessAlive(pid)}
		}
		return nil, fmt.Errorf("create %s: %w", name, &os.PathError{Op: "open", Path: path, Err: err})
	}
	fail := func(err error) (*Segment, error) {
		_ = unix.Unlink(path)
		_ = unix.Close(fd)
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	// Exclusive while initialising: attachers wait for their shared lock.
	if err := flockRetry(fd, unix.LOCK_EX); err != nil {
		return fail(os.NewSyscallError("flock", err))
	}
	// Set explicitly: the umask must not change who may write.
	if o.gid >= 0 {
		if err := unix.Fchown(fd, -1, o.gid); err != nil {
			return fail(os.NewSyscallError("fchown", err))
		}
	}
	if err := unix.Fchmod(fd, o.mode()); err != nil {
		return fail(os.NewSyscallError("fchmod", err))
	}
	if op, err := allocate(fd, int64(HeaderSize+size)); err != nil {
		return fail(os.NewSyscallError(op, err))
	}
	s, err := mapSegment(o, fd, HeaderSize+size)
	if err != nil {
		return fail(err)
	}
	s.name, s.path, s.key, s.created = name, path, key, true
	s.creatorPID = os.Getpid()
	// Guarded: without up-front allocation a full filesystem faults here.
	if err := s.Guard(func() {
		h := s.hdr
		h.magic = magic
		h.version = LayoutVersion
		h.size = uint64(size)
		h.key = key
		h.creatorPID = uint32(os.Getpid())
		atomic.StoreInt32(&h.attached, 1)
		atomic.StoreUint32(&h.ready, readyMagic) // last: the segment is now valid
	}); err != nil {
		_ = unix.Munmap(s.mapping)
		return fail(fmt.Errorf("writing the header faulted (is the filesystem full?): %w", err))
	}
	if err := flockRetry(fd, unix.LOCK_SH); err != nil {
		_ = unix.Munmap(s.mapping)
		return fail(os.NewSyscallError("flock", err))
	}
	return s, nil
}

// attach opens an existing segment. want < 0 accepts any size.
func attach(o *Options, key uint32, want int, deadline time.Time) (*Segment, error) {
	path := o.Path(key)
	name := Name(o.Instance, key)
	wrap := func(err error) error { return fmt.Errorf("attach %s: %w", name, err) }
	for {
		s, retry, err := attachOnce(o, path, key, want)
		if err == nil {
			s.name, s.path, s.key = name, path, key
			return s, nil
		}
		if !retry || !time.Now().Before(deadline) {
			return nil, wrap(err)
		}
		time.Sleep(time.Millisecond) // set-up path only: waiting for the creator
	}
}

// attachOnce makes one attempt; retry says the failure may go away.
func attachOnce(o *Options, path string, key uint32, want int) (_ *Segment, retry bool, _ error) {
	mode := unix.O_RDWR
	if o.ReadOnly {
		mode = unix.O_RDONLY
	}
	fd, err := unix.Open(path, mode|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, false, ErrNotExist
		}
		return nil, false, &os.PathError{Op: "open", Path: path, Err: err}
	}
	ok := false
	defer func() {
		if !ok {
			_ = unix.Close(fd)
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, false, os.NewSyscallError("fstat", err)
	}
	// Trust is decided on the open file, before reading it or waiting on
	// its lock, so the name cannot be swapped in between.
	if why := o.distrust(int(st.Uid), int(st.Gid), fileMode(uint32(st.Mode)), os.Geteuid()); why != "" {
		return nil, false, &OwnerError{Name: Name(o.Instance, key), Path: path, UID: int(st.Uid), GID: int(st.Gid),
			Mode: fileMode(uint32(st.Mode)), EUID: os.Geteuid(), Reason: why}
	}
	// Never block on the creator's lock (it may be stuck): retry instead.
	if err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		if err == unix.EWOULDBLOCK || err == unix.EINTR {
			return nil, true, ErrNotInitialised
		}
		return nil, false, os.NewSyscallError("flock", err)
	}
	// Size and links as the lock holder left them.
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, false, os.NewSyscallError("fstat", err)
	}
	if st.Nlink == 0 {
		return nil, true, ErrNotExist // deleted while we opened it
	}
	if st.Size == 0 {
		return nil, true, ErrNotInitialised // creator between open and ftruncate
	}
	if st.Size < HeaderSize {
		return nil, false, fmt.Errorf("%w: file is %d bytes, smaller than the %d-byte header", ErrTruncated, st.Size, HeaderSize)
	}
	hb := make([]byte, HeaderSize)
	if n, err := unix.Pread(fd, hb, 0); err != nil || n != HeaderSize {
		return nil, false, fmt.Errorf("%w: cannot read header (%d bytes, %v)", ErrTruncated, n, err)
	}
	h := (*header)(unsafe.Pointer(&hb[0]))
	switch {
	case h.magic == 0 && h.ready == 0:
		return nil, true, ErrNotInitialised
	case h.magic != magic:
		return nil, false, fmt.Errorf("%w: bad magic %#x", ErrCorrupt, h.magic)
	case h.version != LayoutVersion:
		return nil, false, &VersionError{Name: Name(o.Instance, key), Found: h.version, Want: LayoutVersion}
	case h.ready != readyMagic:
		return nil, true, ErrNotInitialised
	case h.key != key:
		return nil, false, fmt.Errorf("%w: header key 0x%08x in the file for key 0x%08x", ErrCorrupt, h.key, key)
	case h.size == 0 || h.size > MaxSize:
		return nil, false, fmt.Errorf("%w: impossible size %d", ErrCorrupt, h.size)
	case int32(h.creatorPID) <= 0: // checked as pid_t before it becomes an int
		return nil, false, fmt.Errorf("%w: impossible creator pid %d", ErrCorrupt, h.creatorPID)
	case int64(h.size)+HeaderSize > st.Size:
		return nil, false, fmt.Errorf("%w: header says %d data bytes, file holds %d", ErrTruncated, h.size, st.Size-HeaderSize)
	case int64(h.size)+HeaderSize < st.Size:
		return nil, false, fmt.Errorf("%w: file is %d bytes, header says %d", ErrCorrupt, st.Size, int64(h.size)+HeaderSize)
	}
	if h.flags&flagDeletePending != 0 {
		// Deleted, never attached; unlink it if the deleter died first.
		if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
			_ = unlinkIfSame(path, fd)
			return nil, false, ErrNotExist
		}
		return nil, true, ErrNotExist
	}
	if want >= 0 && uint64(want) != h.size {
		return nil, false, &SizeMismatchError{Name: Name(o.Instance, key), Existing: int(h.size), Requested: want}
	}
	s, err := mapSegment(o, fd, int(st.Size))
	if err != nil {
		return nil, false, err
	}
	s.creatorPID = int(h.creatorPID)
	if !o.ReadOnly {
		atomic.AddInt32(&s.hdr.attached, 1)
	}
	ok = true
	return s, false, nil
}

func mapSegment(o *Options, fd, length int) (*Segment, error) {
	flags := unix.MAP_SHARED
	if o.Prefault {
		flags |= mapPopulate
	}
	prot := unix.PROT_READ | unix.PROT_WRITE
	if o.ReadOnly {
		prot = unix.PROT_READ
	}
	m, err := unix.Mmap(fd, 0, length, prot, flags)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	if o.Lock {
		if err := unix.Mlock(m); err != nil {
			_ = unix.Munmap(m)
			return nil, os.NewSyscallError("mlock", err)
		}
	}
	return &Segment{
		readOnly: o.ReadOnly,
		fd:       fd,
		mapping:  m,
		hdr:      (*header)(unsafe.Pointer(&m[0])),
		data:     m[HeaderSize:length:length],
	}, nil
}

// Close detaches: it unmaps the memory and closes the file. Close after
// Close or Delete does nothing and returns nil.
func (s *Segment) Close() error { return s.detach(false) }

// Delete detaches and unlinks the segment's name at once
// (rtapi_shmem_delete); users still attached keep their memory. Delete after
// Delete returns nil; after Close, ErrClosed (Remove unlinks by key); on a
// read-only attachment it detaches and returns ErrInvalid.
func (s *Segment) Delete() error { return s.detach(true) }

func (s *Segment) detach(del bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		if del && !s.deleted {
			return fmt.Errorf("delete %s: the attachment was closed: %w", s.name, ErrClosed)
		}
		return nil
	}
	s.closed.Store(true)
	if s.readOnly {
		var errs []error
		if del {
			errs = append(errs, fmt.Errorf("delete %s: the attachment is read-only: %w", s.name, ErrInvalid))
		}
		return s.release(errs)
	}
	s.deleted = del
	// Guarded: the header may lie past the end of a truncated file.
	var pending bool
	s.guard(func() {
		if del {
			atomic.OrUint32(&s.hdr.flags, flagDeletePending)
		}
		atomic.AddInt32(&s.hdr.attached, -1)
		pending = atomic.LoadUint32(&s.hdr.flags)&flagDeletePending != 0
	})
	var errs []error
	// Delete unlinks at once, so a SIGKILLed last user leaves nothing. The
	// last user's Close (its lock upgrade succeeds only then) unlinks a
	// segment marked deleted too, in case the deleter died in between.
	if del || pending &&
		unix.Flock(s.fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
		if err := unlinkIfSame(s.path, s.fd); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.release(errs); err != nil {
		return fmt.Errorf("close %s: %w", s.name, err)
	}
	return nil
}

// release unmaps the segment and closes its file: errs and their errors
// joined.
func (s *Segment) release(errs []error) error {
	if err := unix.Munmap(s.mapping); err != nil {
		errs = append(errs, os.NewSyscallError("munmap", err))
	}
	if err := unix.Close(s.fd); err != nil {
		errs = append(errs, os.NewSyscallError("close", err))
	}
	return errors.Join(errs...)
}

// Unlinked reports, with one fstat, whether the segment's name is gone
// (deleted or removed; a new segment may stand under it). ErrClosed after
// Close.
func (s *Segment) Unlinked() (bool, error) {
	if s.closed.Load() {
		return false, fmt.Errorf("unlinked %s: %w", s.name, ErrClosed)
	}
	var st unix.Stat_t
	if err := unix.Fstat(s.fd, &st); err != nil {
		return false, os.NewSyscallError("fstat", err)
	}
	return st.Nlink == 0, nil
}

// unlinkIfSame unlinks path only if it still names the file open as fd (a
// Remove and a new Create may have replaced it).
func unlinkIfSame(path string, fd int) error {
	var a, b unix.Stat_t
	if unix.Fstat(fd, &a) != nil || unix.Stat(path, &b) != nil || a.Ino != b.Ino || a.Dev != b.Dev {
		return nil
	}
	if err := unix.Unlink(path); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "unlink", Path: path, Err: err}
	}
	return nil
}

// fileMode converts st_mode to an os.FileMode (type and permission).
func fileMode(m uint32) os.FileMode {
	mode := os.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		mode |= os.ModeDir
	case unix.S_IFLNK:
		mode |= os.ModeSymlink
	case unix.S_IFIFO:
		mode |= os.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= os.ModeSocket
	case unix.S_IFCHR:
		mode |= os.ModeDevice | os.ModeCharDevice
	default:
		mode |= os.ModeDevice
	}
	return mode
}

func flockRetry(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if err != unix.EINTR {
			return err
		}
	}
}

// creatorOf reads the creator's pid from the segment file at path, without
// blocking; 0 when it cannot be read or is not a gortapi header.
func creatorOf(path string) int {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0
	}
	var h header
	hb := unsafe.Slice((*byte)(unsafe.Pointer(&h)), HeaderSize)
	if n, err := unix.Pread(fd, hb, 0); err != nil || n != HeaderSize || h.magic != magic || int32(h.creatorPID) <= 0 {
		return 0
	}
	return int(h.creatorPID)
}
