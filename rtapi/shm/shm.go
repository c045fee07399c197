package shm

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gortapi/gortapi/internal/group"
)

// DefaultDir is where POSIX shared memory lives on Linux.
const DefaultDir = "/dev/shm"

// HeaderSize is the size of the header in front of the data, which is
// therefore 64-byte aligned.
const HeaderSize = 64

// LayoutVersion is the header layout this build writes and reads.
const LayoutVersion = 1

// MaxSize is the largest data size accepted: 1 TiB, or 1 GiB on 32-bit
// systems.
const MaxSize = min(1<<40, 1<<(strconv.IntSize-2))

const (
	magic                = 0x3153_4950_4154_5247 // "GRTAPIS1" little endian
	readyMagic           = 0x5245_4459           // "YDER": stored last by the creator
	defaultAttachTimeout = time.Second
	flagDeletePending    = 1
)

// header is the segment's first HeaderSize bytes; the creator writes all
// but ready, attached and flags once, before ready.
type header struct {
	_          [0]atomic.Uint64 // 8-byte aligned on 32-bit architectures too
	magic      uint64
	version    uint32
	ready      uint32 // readyMagic once initialised; atomic
	size       uint64 // data bytes after the header
	key        uint32
	creatorPID uint32
	attached   int32  // informational attach count; atomic
	flags      uint32 // flagDeletePending; atomic
	_          [24]byte
}

var _ [HeaderSize - unsafe.Sizeof(header{})]struct{} // header must be HeaderSize bytes
var _ [unsafe.Sizeof(header{}) - HeaderSize]struct{}

// Options says where segments live and how they are mapped. The zero value
// uses /dev/shm, instance 0, no locking or prefault, a one-second attach
// wait, and shares with nobody.
type Options struct {
	// Dir is the directory that holds segment files; "" means /dev/shm.
	Dir string
	// Instance (>= 0, part of the name) separates hosts on one machine.
	Instance int
	// Lock locks the mapping in RAM (mlock). Failing to lock is an error.
	Lock bool
	// Prefault populates every page at map time (MAP_POPULATE).
	Prefault bool
	// AttachTimeout bounds an attach's wait for an unfinished creator,
	// even one that never lets go; 0 means one second, negative no wait.
	AttachTimeout time.Duration
	// Mode is the permission of a created file, whatever the umask; 0
	// means 0600, or 0660 with Group. A mode that lets others, or the group
	// without Group, write is ErrInvalid.
	Mode os.FileMode
	// Group (a name or gid) shares segments with its members, each then
	// trusted as a writer: created segments get this group (the creator
	// must be root or a member), and attach accepts another user's
	// segment of this group. A negative or out-of-range gid or an
	// unknown name is ErrInvalid, by the control socket's rule too.
	Group string
	// AllowUIDs lists further users whose segments are attached.
	AllowUIDs []int
	// ReadOnly makes Attach map the file PROT_READ, needing only read
	// permission; a store through it faults. Create and New refuse it
	// (ErrInvalid).
	ReadOnly bool

	gid int // Group resolved by check; -1 for none
}

func (o *Options) dir() string {
	if o.Dir == "" {
		return DefaultDir
	}
	return o.Dir
}

func (o *Options) attachTimeout() time.Duration {
	switch {
	case o.AttachTimeout == 0:
		return defaultAttachTimeout
	case o.AttachTimeout < 0:
		return 0
	}
	return o.AttachTimeout
}

func (o *Options) check() error {
	if o.Instance < 0 {
		return fmt.Errorf("%w: instance %d is negative", ErrInvalid, o.Instance)
	}
	gid, err := group.Lookup(o.Group)
	if err != nil {
		return err
	}
	o.gid = gid
	for _, uid := range o.AllowUIDs {
		if uid < 0 {
			return fmt.Errorf("%w: AllowUIDs holds negative uid %d", ErrInvalid, uid)
		}
	}
	if m := o.Mode.Perm(); m&0o002 != 0 || (m&0o020 != 0 && gid < 0) || o.Mode&^os.ModePerm != 0 {
		return fmt.Errorf("%w: mode %v: a segment may be writable by its owner and Options.Group only", ErrInvalid, o.Mode)
	}
	return nil
}

// Name returns the POSIX shared-memory name of a segment,
// "/gortapi-<instance>-<key as 8 hex digits>".
func Name(instance int, key uint32) string {
	return fmt.Sprintf("/gortapi-%d-%08x", instance, key)
}

// Path returns the file that holds the segment under o.Dir.
func (o Options) Path(key uint32) string {
	return filepath.Join(o.dir(), Name(o.Instance, key)[1:])
}

// Segment is one attachment of a shared-memory segment, safe for concurrent
// use. Bytes and views stay valid until Close or Delete, then fault.
type Segment struct {
	name    string
	path    string
	key     uint32
	created bool
	fd      int
	mapping []byte // whole file: header + data
	hdr     *header
	data    []byte

	creatorPID int
	readOnly   bool

	mu       sync.Mutex // serialises detach, Attached and Orphan
	closed   atomic.Bool
	deleted  bool // detached by Delete; guarded by mu
	orphaned bool // the mapping is private memory (Orphan); guarded by mu
}

// Name returns the segment's POSIX name, "/gortapi-<instance>-<key>".
func (s *Segment) Name() string { return s.name }

// Path returns the file that backs the segment.
func (s *Segment) Path() string { return s.path }

// Key returns the segment key.
func (s *Segment) Key() uint32 { return s.key }

// Size returns the data size in bytes (without the header).
func (s *Segment) Size() int { return len(s.data) }

// Created reports whether this attachment created the segment.
func (s *Segment) Created() bool { return s.created }

// CreatorPID returns the pid of the process that created the segment.
func (s *Segment) CreatorPID() int { return s.creatorPID }

// ReadOnly reports whether the attachment is read-only (Options.ReadOnly).
func (s *Segment) ReadOnly() bool { return s.readOnly }

// Attached returns the header's attach count, too high after a crash: 0
// after Close, -1 when truncation took the header.
func (s *Segment) Attached() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return 0
	}
	n := -1
	s.guard(func() { n = int(atomic.LoadInt32(&s.hdr.attached)) })
	return n
}

// Bytes returns the segment's Size data bytes, 64-byte aligned, or nil after
// Close; a slice taken before Close must not be used after it.
// RT-safe.
func (s *Segment) Bytes() []byte {
	if s.closed.Load() {
		return nil
	}
	return s.data
}

func checkNew(o *Options, size int) error {
	if err := o.check(); err != nil {
		return err
	}
	if o.ReadOnly {
		return fmt.Errorf("%w: a read-only attachment cannot create a segment", ErrInvalid)
	}
	if size <= 0 || size > MaxSize {
		return fmt.Errorf("%w: size %d out of range 1..%d", ErrInvalid, size, MaxSize)
	}
	return nil
}

func (o *Options) mode() uint32 {
	switch {
	case o.Mode != 0:
		return uint32(o.Mode.Perm())
	case o.gid >= 0:
		return 0o660
	}
	return 0o600
}
