//go:build linux

package shm

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

// Each test binary uses its own instance number so that parallel test runs
// (and other packages) never share segment names.
var testInstance = func() int {
	if v := os.Getenv("SHM_TEST_INSTANCE"); v != "" {
		n, _ := strconv.Atoi(v)
		return n
	}
	return 100000 + os.Getpid()
}()

func TestMain(m *testing.M) {
	code := m.Run()
	if rttest.ChildRole() == "" {
		if rttest.CleanShm(DefaultDir, testInstance) != 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func devShm() Options { return Options{Instance: testInstance} }

func tmpOpts(t *testing.T) Options {
	return Options{Dir: t.TempDir(), Instance: testInstance}
}

// both runs f against the real /dev/shm and against a temporary directory.
func both(t *testing.T, f func(t *testing.T, o Options)) {
	t.Run("devshm", func(t *testing.T) { f(t, devShm()) })
	t.Run("tmpdir", func(t *testing.T) { f(t, tmpOpts(t)) })
}

func TestName(t *testing.T) {
	assert.Equal(t, "/gortapi-0-0000abcd", Name(0, 0xabcd))
	assert.Equal(t, "/gortapi-3-ffffffff", Name(3, 0xffffffff))
	assert.Equal(t, "/tmp/x/gortapi-2-00000010", Options{Dir: "/tmp/x", Instance: 2}.Path(16))
	assert.Equal(t, "/dev/shm/gortapi-0-00000001", Options{}.Path(1))
}

func TestCreateAttachShare(t *testing.T) {
	both(t, func(t *testing.T, o Options) {
		a, err := New(o, 1, 4096)
		require.NoError(t, err)
		assert.True(t, a.Created())
		assert.Equal(t, 4096, a.Size())
		assert.Equal(t, os.Getpid(), a.CreatorPID())
		assert.Zero(t, uintptr(unsafe.Pointer(&a.Bytes()[0]))%64, "data is cache-line aligned")

		b, err := New(o, 1, 4096)
		require.NoError(t, err)
		assert.False(t, b.Created())
		c, err := Attach(o, 1)
		require.NoError(t, err)
		assert.Equal(t, 4096, c.Size())
		assert.Equal(t, 3, a.Attached())

		a.Bytes()[10] = 42
		assert.Equal(t, byte(42), b.Bytes()[10])
		assert.Equal(t, byte(42), c.Bytes()[10])

		ok, err := Exists(o, 1)
		require.NoError(t, err)
		assert.True(t, ok)
		require.NoError(t, c.Close())
		assert.Equal(t, 2, a.Attached())
		require.NoError(t, b.Close())
		require.NoError(t, a.Delete())
		ok, err = Exists(o, 1)
		require.NoError(t, err)
		assert.False(t, ok, "last user deleted it")
	})
}

func TestSizeMismatch(t *testing.T) {
	both(t, func(t *testing.T, o Options) {
		a, err := New(o, 2, 100)
		require.NoError(t, err)
		defer a.Delete()
		_, err = New(o, 2, 200)
		require.ErrorIs(t, err, ErrSizeMismatch)
		var sm *SizeMismatchError
		require.ErrorAs(t, err, &sm)
		assert.Equal(t, 100, sm.Existing)
		assert.Equal(t, 200, sm.Requested)
		assert.Contains(t, err.Error(), "size 100")
		assert.Contains(t, err.Error(), "size 200")
	})
}

func TestAttachMissingAndCreateExisting(t *testing.T) {
	both(t, func(t *testing.T, o Options) {
		_, err := Attach(o, 3)
		require.ErrorIs(t, err, ErrNotExist)
		require.ErrorIs(t, err, os.ErrNotExist)
		a, err := Create(o, 3, 8)
		require.NoError(t, err)
		_, err = Create(o, 3, 8)
		require.ErrorIs(t, err, ErrExist)
		require.ErrorIs(t, err, os.ErrExist)
		require.NoError(t, a.Delete())
		require.ErrorIs(t, Remove(o, 3), ErrNotExist)
	})
}

func TestMisuse(t *testing.T) {
	o := tmpOpts(t)
	for _, size := range []int{0, -1, MaxSize + 1} {
		_, err := New(o, 1, size)
		assert.ErrorIs(t, err, ErrInvalid, "size %d", size)
		_, err = Create(o, 1, size)
		assert.ErrorIs(t, err, ErrInvalid, "size %d", size)
	}
	bad := Options{Instance: -1}
	_, err := New(bad, 1, 8)
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = Attach(bad, 1)
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = Exists(bad, 1)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorIs(t, Remove(bad, 1), ErrInvalid)
	_, err = New(Options{Dir: "/nonexistent/dir"}, 1, 8)
	assert.ErrorIs(t, err, os.ErrNotExist)

	s, err := New(o, 1, 8)
	require.NoError(t, err)
	require.NoError(t, s.Delete())
	// Close and Delete again do nothing, as a deferred Close after an
	// explicit Delete must not fail.
	assert.NoError(t, s.Close())
	assert.NoError(t, s.Delete())
	assert.Nil(t, s.Bytes())
	assert.Zero(t, s.Attached())
	_, err = View[uint64](s, 0)
	assert.ErrorIs(t, err, ErrClosed)

	// A closed attachment cannot delete (it no longer has the file);
	// Remove does that by key.
	closed, err := New(o, 2, 8)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	assert.NoError(t, closed.Close())
	assert.ErrorIs(t, closed.Delete(), ErrClosed)
	require.NoError(t, Remove(o, 2))
}

// Delete unlinks the name at once (shm_unlink): users still attached keep
// their memory, and a later New creates a new segment.
func TestDeleteUnlinksUsersKeepMemory(t *testing.T) {
	both(t, func(t *testing.T, o Options) {
		a, err := New(o, 4, 64)
		require.NoError(t, err)
		b, err := Attach(o, 4)
		require.NoError(t, err)
		require.NoError(t, a.Delete())
		ok, _ := Exists(o, 4)
		assert.False(t, ok, "the name goes at once")
		b.Bytes()[0] = 1 // still mapped
		c, err := New(o, 4, 64)
		require.NoError(t, err)
		assert.True(t, c.Created(), "a new segment, not the deleted one")
		assert.Equal(t, byte(0), c.Bytes()[0])
		require.NoError(t, b.Close())
		ok, _ = Exists(o, 4)
		assert.True(t, ok, "closing the deleted segment's last user leaves the new one alone")
		require.NoError(t, c.Delete())
	})
}

func TestCloseWithoutDeleteKeeps(t *testing.T) {
	o := tmpOpts(t)
	a, err := New(o, 5, 64)
	require.NoError(t, err)
	a.Bytes()[3] = 7
	require.NoError(t, a.Close())
	b, err := Attach(o, 5)
	require.NoError(t, err, "a segment outlives its users until deleted")
	assert.Equal(t, byte(7), b.Bytes()[3])
	require.NoError(t, b.Delete())
}

// Prefault makes every page of the mapping resident before anything
// touches it (mincore), and Lock locks all of it (smaps' Locked); a segment
// with neither has its untouched pages not resident, so the checks can fail.
func TestLockPrefault(t *testing.T) {
	rttest.SkipIfEmulated(t, "qemu-user maps memory itself: mincore and smaps describe its pages, not what the kernel gave the guest program")
	const size = 1 << 20
	plain, err := New(devShm(), 7, size)
	require.NoError(t, err)
	defer func() { require.NoError(t, plain.Delete()) }()
	pages := (len(plain.mapping) + os.Getpagesize() - 1) / os.Getpagesize()
	require.Less(t, residentPages(t, plain.mapping), pages, "a plain segment's untouched pages are not resident")

	o := devShm()
	o.Prefault = true
	prefaulted, err := New(o, 8, size)
	require.NoError(t, err)
	defer func() { require.NoError(t, prefaulted.Delete()) }()
	require.Equal(t, pages, residentPages(t, prefaulted.mapping), "prefaulted: every page resident")
	require.Zero(t, lockedBytes(t, prefaulted.mapping), "not locked unless asked")

	o.Lock = true
	s, err := New(o, 6, size)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOMEM) {
		t.Skipf("mlock refused (%v): needs CAP_IPC_LOCK or a larger RLIMIT_MEMLOCK; run as root", err)
	}
	require.NoError(t, err)
	require.Equal(t, pages, residentPages(t, s.mapping), "locked and prefaulted: every page resident")
	require.EqualValues(t, pages*os.Getpagesize(), lockedBytes(t, s.mapping), "the whole mapping is locked")
	s.Bytes()[size-1] = 1
	require.NoError(t, s.Delete())
}

// residentPages counts the pages of m in RAM.
func residentPages(t *testing.T, m []byte) int {
	t.Helper()
	n, err := sys.ResidentPages(m)
	require.NoError(t, err)
	return n
}

// lockedBytes is the "Locked:" of the mapping that starts at m in
// /proc/self/smaps.
func lockedBytes(t *testing.T, m []byte) int64 {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	require.NoError(t, err)
	start := strconv.FormatUint(uint64(uintptr(unsafe.Pointer(&m[0]))), 16) + "-"
	in := false
	for _, line := range strings.Split(string(smaps), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = strings.HasPrefix(fields[0], start) // a mapping's first line: its range
			continue
		}
		if in && fields[0] == "Locked:" {
			kB, err := strconv.ParseInt(fields[1], 10, 64)
			require.NoError(t, err)
			return kB << 10
		}
	}
	t.Fatalf("no mapping at %s in /proc/self/smaps", start)
	return 0
}

// writeRaw writes a segment file by hand, for damaged-file tests.
func writeRaw(t *testing.T, o Options, key uint32, b []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(o.Path(key), b, 0o600))
	t.Cleanup(func() { _ = os.Remove(o.Path(key)) })
}

func validHeader(key uint32, size int) []byte {
	b := make([]byte, HeaderSize+size)
	h := (*header)(unsafe.Pointer(&b[0]))
	*h = header{magic: magic, version: LayoutVersion, ready: readyMagic, size: uint64(size), key: key, creatorPID: 1, attached: 0}
	return b
}

func TestDamagedFilesRefused(t *testing.T) {
	o := devShm()
	o.AttachTimeout = 20 * time.Millisecond
	garbage := []byte(strings.Repeat("not a segment header, just garbage. ", 10))
	cases := []struct {
		name string
		file func() []byte
		want error
		text string
	}{
		{"short", func() []byte { return []byte("tiny") }, ErrTruncated, "smaller than the 64-byte header"},
		{"truncated data", func() []byte { return validHeader(10, 4096)[:HeaderSize+100] }, ErrTruncated, "4096 data bytes"},
		{"garbage", func() []byte { return garbage }, ErrCorrupt, "bad magic"},
		{"grown", func() []byte { return append(validHeader(10, 64), 0, 0, 0) }, ErrCorrupt, "header says"},
		{"wrong key", func() []byte { return validHeader(11, 64) }, ErrCorrupt, "key 0x0000000b"},
		{"zero size", func() []byte { b := validHeader(10, 64); (*header)(unsafe.Pointer(&b[0])).size = 0; return b }, ErrCorrupt, "impossible size"},
		{"version", func() []byte { b := validHeader(10, 64); (*header)(unsafe.Pointer(&b[0])).version = 9; return b }, ErrVersion, "layout version 9"},
		{"never initialised", func() []byte { return make([]byte, HeaderSize+64) }, ErrNotInitialised, "not initialised"},
		{"creator died before ready", func() []byte { b := validHeader(10, 64); (*header)(unsafe.Pointer(&b[0])).ready = 0; return b }, ErrNotInitialised, ""},
		{"empty file", func() []byte { return nil }, ErrNotInitialised, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			writeRaw(t, o, 10, c.file())
			for _, open := range []func() (*Segment, error){
				func() (*Segment, error) { return Attach(o, 10) },
				func() (*Segment, error) { return New(o, 10, 64) },
			} {
				s, err := open()
				require.ErrorIs(t, err, c.want)
				assert.Nil(t, s)
				assert.Contains(t, err.Error(), c.text)
				assert.Contains(t, err.Error(), "/gortapi-")
			}
		})
	}
	var ve *VersionError
	writeRaw(t, o, 10, func() []byte { b := validHeader(10, 64); (*header)(unsafe.Pointer(&b[0])).version = 2; return b }())
	_, err := Attach(o, 10)
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, uint32(2), ve.Found)
}

// A creator pid past pid_t's range is refused as corrupt, as
// existingCreator refuses it: as an int it stayed positive on 64-bit, and
// kill(2) took its low 32 bits (0xffffffff is -1, every process), so a dead
// host's segment read as alive.
func TestAttachRefusesImpossibleCreatorPID(t *testing.T) {
	o := tmpOpts(t)
	for _, pid := range []uint32{0xffff_ffff, 0x8000_0000} {
		b := validHeader(10, 64)
		(*header)(unsafe.Pointer(&b[0])).creatorPID = pid
		writeRaw(t, o, 10, b)
		s, err := Attach(o, 10)
		if err == nil {
			t.Errorf("creator pid %#x: attached, CreatorPID %d, alive %v", pid, s.CreatorPID(), sys.ProcessAlive(s.CreatorPID()))
			_ = s.Close()
			continue
		}
		assert.ErrorIs(t, err, ErrCorrupt, "creator pid %#x", pid)
		assert.Contains(t, err.Error(), "creator pid")
	}
}

// A reader that attaches before the creator has initialised waits for it.
func TestEarlyReaderWaits(t *testing.T) {
	o := devShm()
	o.AttachTimeout = 5 * time.Second
	b := validHeader(12, 64)
	(*header)(unsafe.Pointer(&b[0])).ready = 0
	writeRaw(t, o, 12, b)
	done := make(chan error, 1)
	go func() {
		s, err := Attach(o, 12)
		if err == nil {
			err = s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("attach returned before the segment was ready: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	f, err := os.OpenFile(o.Path(12), os.O_RDWR, 0)
	require.NoError(t, err)
	var ready [4]byte
	*(*uint32)(unsafe.Pointer(&ready[0])) = readyMagic
	_, err = f.WriteAt(ready[:], int64(unsafe.Offsetof(header{}.ready)))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, <-done)
}

type goodView struct {
	Pos   [4]float64
	Count uint32
	Flags uint16
	On    bool
	_     [1]byte
	Inner struct{ A, B int64 }
}

type badView struct {
	Pos  float64
	Axes [2]struct {
		Name string
	}
}

func TestViews(t *testing.T) {
	s, err := New(devShm(), 20, 256)
	require.NoError(t, err)
	defer s.Delete()
	v, err := View[goodView](s, 64)
	require.NoError(t, err)
	v.Count = 9
	v.Pos[1] = 1.5
	w, err := View[goodView](s, 64)
	require.NoError(t, err)
	assert.Equal(t, uint32(9), w.Count)
	assert.Equal(t, 1.5, w.Pos[1])

	align := int(unsafe.Alignof(goodView{})) // 8, or 4 where Go aligns 64-bit words to 4 (386, arm)
	_, err = View[goodView](s, align/2)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), fmt.Sprintf("%d-byte alignment", align))
	_, err = View[goodView](s, 208)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "does not fit")
	_, err = View[goodView](s, -8)
	assert.ErrorIs(t, err, ErrInvalid)

	_, err = View[badView](s, 0)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Equal(t, "Axes[].Name", fe.Field)
	assert.Contains(t, err.Error(), "string")

	for _, c := range []struct {
		err   error
		field string
	}{
		{viewErr[*int](s), ""},
		{viewErr[struct{ P *int }](s), "P"},
		{viewErr[struct{ S []byte }](s), "S"},
		{viewErr[struct{ M map[int]int }](s), "M"},
		{viewErr[struct{ I any }](s), "I"},
		{viewErr[struct{ C chan int }](s), "C"},
		{viewErr[struct{ F func() }](s), "F"},
		{viewErr[struct{ U uintptr }](s), "U"},
		{viewErr[struct{ U unsafe.Pointer }](s), "U"},
	} {
		require.ErrorAs(t, c.err, &fe)
		assert.Equal(t, c.field, fe.Field)
	}
	assert.Error(t, CheckPointerFree(nil))

	sl, err := ViewSlice[uint32](s, 0, 64)
	require.NoError(t, err)
	sl[63] = 5
	assert.Equal(t, byte(5), s.Bytes()[252])
	_, err = ViewSlice[uint32](s, 0, 65)
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = ViewSlice[uint32](s, 0, -1)
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = ViewSlice[uint64](s, 0, math.MaxInt/4)
	assert.ErrorIs(t, err, ErrInvalid)
	empty, err := ViewSlice[uint32](s, 256, 0)
	require.NoError(t, err)
	assert.Empty(t, empty)
	_, err = ViewSlice[string](s, 0, 1)
	assert.ErrorIs(t, err, ErrInvalid)
}

func viewErr[T any](s *Segment) error { _, err := View[T](s, 0); return err }

func TestViewNoAllocAfterCreate(t *testing.T) {
	s, err := New(devShm(), 21, 64)
	require.NoError(t, err)
	defer s.Delete()
	v, err := View[goodView](s, 0)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(1000, func() {
		v.Count++
		atomic.AddUint32(&v.Count, 1)
		_ = s.Bytes()
	})
	assert.Zero(t, allocs)
}

// child re-executes this test binary to run one helper test in another
// process.
func child(t *testing.T, test, role string, extra ...string) *exec.Cmd {
	rttest.RequireSelfExec(t)
	return withTestEnv(rttest.Child(role, "-test.run=^"+test+"$", "-test.count=1"), extra)
}

// withTestEnv gives a child this process's segment instance and the
// parent's extra variables, and shows its stderr.
func withTestEnv(cmd *exec.Cmd, extra []string) *exec.Cmd {
	cmd.Env = append(cmd.Env, "SHM_TEST_INSTANCE="+strconv.Itoa(testInstance))
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	return cmd
}

func TestCrossProcessShare(t *testing.T) {
	if rttest.ChildRole() == "share" {
		s, err := Attach(devShm(), 30)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		v, _ := View[uint64](s, 8)
		if atomic.LoadUint64(v) != 0xfeed {
			os.Exit(3)
		}
		atomic.StoreUint64(v, 0xbeef)
		_ = s.Close()
		os.Exit(0)
	}
	s, err := New(devShm(), 30, 64)
	require.NoError(t, err)
	defer s.Delete()
	v, err := View[uint64](s, 8)
	require.NoError(t, err)
	atomic.StoreUint64(v, 0xfeed)
	require.NoError(t, child(t, "TestCrossProcessShare", "share").Run())
	assert.Equal(t, uint64(0xbeef), atomic.LoadUint64(v))
	assert.Equal(t, 1, s.Attached())
}

// A user killed without detaching does not keep a deleted segment alive:
// the kernel drops its flock, so Delete sees it is the last user.
func TestDeleteAfterUserKilled(t *testing.T) {
	if rttest.ChildRole() == "hang" {
		s, err := Attach(devShm(), 31)
		if err != nil {
			os.Exit(2)
		}
		s.Bytes()[0] = 1
		os.Stdout.WriteString("attached\n")
		select {} // wait to be killed
	}
	rttest.RequireSelfExec(t) // before the segment exists: a skip must not leak it
	s, err := New(devShm(), 31, 64)
	require.NoError(t, err)
	cmd := child(t, "TestDeleteAfterUserKilled", "hang")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	buf := make([]byte, 9)
	_, err = out.Read(buf)
	require.NoError(t, err)
	require.Equal(t, byte(1), s.Bytes()[0])
	assert.Equal(t, 2, s.Attached())
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.Equal(t, 2, s.Attached(), "the header count is informational and stays high")
	require.NoError(t, s.Delete())
	ok, err := Exists(devShm(), 31)
	require.NoError(t, err)
	assert.False(t, ok, "killed user's lock was released by the kernel")
}

// Delete while another process is attached, then that process is
// SIGKILLed: nothing is left in /dev/shm. Before, the last Close was to
// unlink the name, and a killed user never closes: the file stayed (and
// Exists said true) until some later attach tidied up.
func TestDeleteWhileAttachedThenUserKilled(t *testing.T) {
	if rttest.ChildRole() == "hang" {
		s, err := Attach(devShm(), 33)
		if err != nil {
			os.Exit(2)
		}
		s.Bytes()[0] = 1
		os.Stdout.WriteString("attached\n")
		select {} // wait to be killed
	}
	rttest.RequireSelfExec(t) // before the segment exists: a skip must not leak it
	s, err := New(devShm(), 33, 64)
	require.NoError(t, err)
	cmd := child(t, "TestDeleteWhileAttachedThenUserKilled", "hang")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	_, err = out.Read(make([]byte, 9))
	require.NoError(t, err)
	require.NoError(t, s.Delete())
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	ok, err := Exists(devShm(), 33)
	require.NoError(t, err)
	assert.False(t, ok)
	_, err = os.Stat(devShm().Path(33))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing left in /dev/shm")
}

// A segment marked deleted whose other users died is finished off by the
// next New, which creates it afresh.
func TestNewReplacesOrphanedDeletedSegment(t *testing.T) {
	o := tmpOpts(t)
	a, err := New(o, 32, 64)
	require.NoError(t, err)
	b, err := Attach(o, 32)
	require.NoError(t, err)
	a.Bytes()[0] = 9
	require.NoError(t, a.Delete())
	// Simulate b's process dying: drop its mapping and fd (which hold the
	// flock) without detaching.
	require.NoError(t, unix.Munmap(b.mapping))
	require.NoError(t, syscall.Close(b.fd))
	c, err := New(o, 32, 128)
	require.NoError(t, err, "the orphaned segment is gone, a new one is created")
	assert.True(t, c.Created())
	assert.Equal(t, byte(0), c.Bytes()[0])
	require.NoError(t, c.Delete())
}

func TestConcurrentNewAndDelete(t *testing.T) {
	o := devShm()
	o.AttachTimeout = 5 * time.Second
	const workers, rounds = 4, 50
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for range rounds {
				s, err := New(o, 40, 128)
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
				s.Bytes()[w] = 1
				if err := s.Delete(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		require.NoError(t, <-errs)
	}
	ok, _ := Exists(o, 40)
	assert.False(t, ok)
}

// The segment header is the same on 32-bit and 64-bit architectures.
func TestHeaderLayout(t *testing.T) {
	rttest.RequireLayout64(t, reflect.TypeFor[header]())
	assert.EqualValues(t, HeaderSize, unsafe.Sizeof(header{}))
	assert.EqualValues(t, 16, unsafe.Offsetof(header{}.size))
	assert.EqualValues(t, 36, unsafe.Offsetof(header{}.flags))
}

// A read-only attachment sees the writer's stores, cannot store (the
// fault is contained by Guard here; unguarded it would be a crash), leaves
// the attach count alone, and cannot create or delete.
func TestReadOnlyAttach(t *testing.T) {
	both(t, func(t *testing.T, o Options) {
		w, err := New(o, 60, 4096)
		require.NoError(t, err)
		defer w.Delete()
		ro := o
		ro.ReadOnly = true
		r, err := Attach(ro, 60)
		require.NoError(t, err)
		assert.True(t, r.ReadOnly())
		assert.Equal(t, 1, w.Attached(), "a reader does not count itself")
		w.Bytes()[1] = 9
		assert.Equal(t, byte(9), r.Bytes()[1])
		// qemu-user reports the fault of a store to a read-only page at
		// address 0, which Go takes for a nil dereference, not a fault
		// the guard may recover: the kernel's answer is checked natively.
		if rttest.Emulator() == "" {
			err = r.Guard(func() { r.Bytes()[1] = 3 })
			require.Error(t, err, "a store through a read-only mapping faults")
		}
		assert.Equal(t, byte(9), w.Bytes()[1])

		_, err = New(ro, 61, 4096)
		assert.ErrorIs(t, err, ErrInvalid)
		_, err = Create(ro, 61, 4096)
		assert.ErrorIs(t, err, ErrInvalid)
		assert.ErrorIs(t, r.Delete(), ErrInvalid)
		ok, err := Exists(o, 60)
		require.NoError(t, err)
		assert.True(t, ok, "a read-only Delete removes nothing")
		assert.Equal(t, 1, w.Attached())
	})
}

// Unlinked tells a reader that the segment's name is gone: its writer
// deleted it, or it was removed so a new writer can create another.
func TestUnlinked(t *testing.T) {
	both(t, func(t *testing.T, o Options) {
		w, err := New(o, 62, 4096)
		require.NoError(t, err)
		r, err := Attach(o, 62)
		require.NoError(t, err)
		gone, err := r.Unlinked()
		require.NoError(t, err)
		assert.False(t, gone)
		require.NoError(t, w.Delete())
		gone, err = r.Unlinked()
		require.NoError(t, err)
		assert.True(t, gone)
		require.NoError(t, r.Close())
		_, err = r.Unlinked()
		assert.ErrorIs(t, err, ErrClosed)
	})
}
