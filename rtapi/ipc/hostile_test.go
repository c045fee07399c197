//go:build linux

package ipc

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// The hostile-writer harness: a child process maps the same /dev/shm
// segment as the test and, while the test produces and consumes through an
// object in it, writes random and targeted values into every field of that
// object. In the test process the object ends right before a PROT_NONE
// page, so a stray access faults instead of going unnoticed. The test must
// see only data and typed errors, and finish.

// hostileObject names the object under attack and where its fields are.
type hostileObject struct {
	name string
	size int // bytes the object occupies
	// fields are (offset, width) of every word a hostile writer targets;
	// the child also scribbles over the whole object at random.
	fields [][2]int
}

var ringFields = [][2]int{
	{0, 4}, {4, 4}, {8, 8}, // magic, mode, capacity
	{64, 8}, {72, 8}, // head, dropped
	{128, 8},           // tail
	{192, 4}, {196, 4}, // sleeping, closed
}

// guardedSeg creates a segment whose last data page is PROT_NONE in this
// process, and returns it and the offset where an object of size bytes ends
// right before that page.
func guardedSeg(tb testing.TB, size int) (*shm.Segment, int) {
	tb.Helper()
	page := os.Getpagesize()
	pages := (shm.HeaderSize+size+page-1)/page + 1
	seg := newSeg(tb, pages*page-shm.HeaderSize)
	data := seg.Bytes()
	guard := len(data) - page
	require.NoError(tb, unix.Mprotect(data[guard:], unix.PROT_NONE))
	return seg, guard - size
}

func init() {
	// The hostile child writes into [IPC_OFF, IPC_OFF+IPC_SIZE) of the
	// segment until killed: targeted values into the fields listed in
	// IPC_FIELDS ("off:width,..."), record-header-like words at aligned
	// places, and random bytes anywhere.
	children["hostile"] = func(seg *shm.Segment) {
		off, _ := strconv.Atoi(os.Getenv("IPC_OFF"))
		size, _ := strconv.Atoi(os.Getenv("IPC_SIZE"))
		fields := parseFields(os.Getenv("IPC_FIELDS"))
		mem := seg.Bytes()[off : off+size]
		rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
		say("ready")
		for i := uint64(0); ; i++ {
			switch rng.IntN(4) {
			case 0, 1: // a targeted value into a known field
				f := fields[rng.IntN(len(fields))]
				storeField(mem[f[0]:], f[1], hostileValue(rng, loadField(mem[f[0]:], f[1])))
			case 2: // something like a record header, at an aligned place
				p := rng.IntN(size/8) * 8
				storeField(mem[p:], 4, hostileValue(rng, 0))
				storeField(mem[p+4:], 4, uint64(rng.IntN(3)))
			case 3: // a random byte anywhere
				mem[rng.IntN(size)] = byte(rng.Uint32())
			}
			if i%8 == 0 {
				// Leave it alone for a moment now and then, so the owner
				// also runs on a healthy object and recovers.
				for range rng.IntN(400_000) {
					spinSink++
				}
			}
		}
	}
}

func parseFields(s string) [][2]int {
	var fields [][2]int
	for len(s) > 0 {
		var f [2]int
		n := 0
		for n < len(s) && s[n] != ',' {
			n++
		}
		item := s[:n]
		for i := range item {
			if item[i] == ':' {
				f[0], _ = strconv.Atoi(item[:i])
				f[1], _ = strconv.Atoi(item[i+1:])
			}
		}
		fields = append(fields, f)
		s = s[min(n+1, len(s)):]
	}
	return fields
}

func fieldsEnv(fields [][2]int) string {
	s := "IPC_FIELDS="
	for i, f := range fields {
		if i > 0 {
			s += ","
		}
		s += strconv.Itoa(f[0]) + ":" + strconv.Itoa(f[1])
	}
	return s
}

// hostileValue picks a value meant to hurt: around the current one, near
// the capacities and powers of two, unaligned, huge, or random.
func hostileValue(rng *rand.Rand, cur uint64) uint64 {
	targets := []uint64{0, 1, 7, 8, 63, 64, 2047, 2048, 4095, 4096, 1 << 31, 0xFFFFFFFF, 1 << 62, ^uint64(0), ^uint64(0) - 7}
	switch rng.IntN(4) {
	case 0:
		return targets[rng.IntN(len(targets))]
	case 1:
		return cur + uint64(rng.IntN(8192)) - 4096
	case 2:
		return cur + 8*uint64(rng.IntN(64))
	}
	return rng.Uint64()
}

func storeField(b []byte, width int, v uint64) {
	if width == 4 {
		atomic.StoreUint32((*uint32)(unsafe.Pointer(&b[0])), uint32(v))
		return
	}
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&b[0])), v)
}

func loadField(b []byte, width int) uint64 {
	if width == 4 {
		return uint64(atomic.LoadUint32((*uint32)(unsafe.Pointer(&b[0]))))
	}
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&b[0])))
}

// underAttack lays out an object in a guarded segment with layout, starts
// the hostile child on it, runs owner, and stops the child.
func underAttack(t *testing.T, obj hostileObject, layout func(mem []byte), owner func(mem []byte)) {
	seg, off := guardedSeg(t, obj.size)
	mem := seg.Bytes()[off : off+obj.size : off+obj.size]
	layout(mem)
	p := startChild(t, "hostile", seg, "IPC_OFF="+strconv.Itoa(off), "IPC_SIZE="+strconv.Itoa(obj.size), fieldsEnv(obj.fields))
	p.expect(t, "ready")
	finishes(t, obj.name+" under attack", func() { owner(mem) })
	p.kill(t)
}

// recovers checks that once the hostile writer is gone, both sides of a
// ring find each other again within a bounded number of rounds and then
// pass data cleanly. round puts and takes one item and reports whether it
// came through intact.
func recovers(t *testing.T, round func() bool) {
	t.Helper()
	synced := false
	for range 100 {
		if synced = round(); synced {
			break
		}
	}
	require.True(t, synced, "the ring did not recover after the writer stopped")
	for i := range 100 {
		require.True(t, round(), "round %d after recovery", i)
	}
}

// typed reports whether err is one of the errors the object may return.
func typed(err error, allowed ...error) bool {
	if err == nil {
		return true
	}
	for _, a := range allowed {
		if errors.Is(err, a) {
			return true
		}
	}
	return false
}

// hostileOps is how many operations each hostile test makes under
// attack (a tenth under -short: rttest.Rounds).
const hostileOps = 200_000

func TestHostileWriterRecordRing(t *testing.T) {
	t.Parallel()
	obj := hostileObject{name: "record ring", size: RingSize(2048), fields: ringFields}
	var q *RecordRing
	underAttack(t, obj, func(mem []byte) {
		var err error
		q, err = InitRecordRing(mem)
		require.NoError(t, err)
	}, func([]byte) {
		var wg sync.WaitGroup
		var bad atomic.Value
		wg.Go(func() { // producer
			rec := make([]byte, q.MaxRecord())
			for i := range rttest.Rounds(hostileOps) {
				if err := q.Put(rec[:i%len(rec)]); !typed(err, ErrFull, ErrCorrupt) {
					bad.Store(err)
					return
				}
			}
		})
		buf := make([]byte, 2048)
		data, corrupt := 0, 0
		for i := range rttest.Rounds(hostileOps) {
			var err error
			var n int
			switch i % 3 {
			case 0:
				var p []byte
				if p, err = q.Peek(); err == nil {
					require.LessOrEqual(t, len(p), q.MaxRecord())
					require.NoError(t, q.Consume())
				}
			case 1:
				n, err = q.Get(buf)
				if err == nil {
					require.LessOrEqual(t, n, q.MaxRecord())
				}
			case 2:
				err = q.Wait(sys.Nanotime() + 100_000)
				require.True(t, typed(err, ErrTimeout, ErrClosed), "%v", err)
				continue
			}
			switch {
			case err == nil:
				data++
			case errors.Is(err, ErrCorrupt):
				corrupt++
				_, err = q.Discard()
				require.True(t, typed(err, ErrCorrupt), "Discard: %v", err)
			default:
				require.True(t, typed(err, ErrEmpty), "%v", err)
			}
		}
		wg.Wait()
		require.Nil(t, bad.Load(), "producer got an untyped error")
		t.Logf("records %d, ErrCorrupt %d, CorruptEvents %d", data, corrupt, q.CorruptEvents())
	})
	buf := make([]byte, 2048)
	recovers(t, func() bool {
		if err := q.Put([]byte("intact")); !typed(err, ErrCorrupt, ErrFull) {
			return false
		}
		n, err := q.Get(buf)
		if err != nil {
			_, _ = q.Discard()
			return false
		}
		return string(buf[:n]) == "intact"
	})
}

func TestHostileWriterStreamRing(t *testing.T) {
	t.Parallel()
	obj := hostileObject{name: "stream ring", size: RingSize(1024), fields: ringFields}
	var s *StreamRing
	underAttack(t, obj, func(mem []byte) {
		var err error
		s, err = InitStreamRing(mem)
		require.NoError(t, err)
	}, func([]byte) {
		var wg sync.WaitGroup
		var bad atomic.Value
		wg.Go(func() {
			chunk := make([]byte, 700)
			for i := range rttest.Rounds(hostileOps) {
				n, err := s.Write(chunk[:i%len(chunk)])
				if !typed(err, ErrFull, ErrCorrupt) || n > i%len(chunk) {
					bad.Store(err)
					return
				}
			}
		})
		buf := make([]byte, 2048)
		for i := range rttest.Rounds(hostileOps) {
			n, err := s.Read(buf[:i%len(buf)])
			require.True(t, typed(err, ErrEmpty, ErrCorrupt), "%v", err)
			require.LessOrEqual(t, n, i%len(buf))
		}
		wg.Wait()
		require.Nil(t, bad.Load(), "writer got an untyped error or wrote too much")
		t.Logf("CorruptEvents %d", s.CorruptEvents())
	})
	buf := make([]byte, 2048)
	recovers(t, func() bool {
		_, _ = s.Write([]byte("intact"))
		n, err := s.Read(buf)
		if err != nil || string(buf[:n]) != "intact" {
			_, _ = s.Discard()
			return false
		}
		return true
	})
}

func TestHostileWriterSeqlock(t *testing.T) {
	t.Parallel()
	var sl *Seqlock[snapshot]
	obj := hostileObject{name: "seqlock", size: int(unsafe.Sizeof(*sl)), fields: [][2]int{{0, 8}, {64, 8}, {64 + 56, 8}}}
	underAttack(t, obj, func(mem []byte) {
		sl = (*Seqlock[snapshot])(unsafe.Pointer(&mem[0]))
	}, func([]byte) {
		var got snapshot
		busy := 0
		for i := range rttest.Rounds(hostileOps) {
			sl.Write(&snapshot{Seq: uint64(i), Copy: uint64(i)})
			if _, err := sl.ReadBounded(&got, 8); err != nil {
				require.ErrorIs(t, err, ErrBusy)
				busy++
			}
		}
		t.Logf("ReadBounded busy %d of %d", busy, rttest.Rounds(hostileOps))
	})
}

func TestHostileWriterMutex(t *testing.T) {
	t.Parallel()
	var m *Mutex
	obj := hostileObject{name: "mutex", size: int(unsafe.Sizeof(*m)), fields: [][2]int{{0, 4}, {4, 4}}}
	underAttack(t, obj, func(mem []byte) {
		m = (*Mutex)(unsafe.Pointer(&mem[0]))
	}, func([]byte) {
		for i := range rttest.Rounds(hostileOps / 10) {
			var err error
			if i%2 == 0 {
				err = m.TryLock()
			} else {
				err = m.LockDeadline(sys.Nanotime() + 50_000)
			}
			require.True(t, typed(err, ErrBusy, ErrOwnerDead, ErrTimeout), "lock: %v", err)
			require.True(t, typed(m.Unlock(), ErrNotOwner, ErrNotLocked), "unlock")
		}
	})
}

func TestHostileWriterSemaphore(t *testing.T) {
	t.Parallel()
	var s *Semaphore
	obj := hostileObject{name: "semaphore", size: int(unsafe.Sizeof(*s)), fields: [][2]int{{0, 4}, {4, 4}}}
	underAttack(t, obj, func(mem []byte) {
		s = (*Semaphore)(unsafe.Pointer(&mem[0]))
	}, func([]byte) {
		for i := range rttest.Rounds(hostileOps / 10) {
			var err error
			switch i % 3 {
			case 0:
				err = s.Give()
			case 1:
				err = s.TryTake()
			case 2:
				err = s.TakeDeadline(sys.Nanotime() + 50_000)
			}
			require.True(t, typed(err, ErrBusy, ErrOverflow, ErrTimeout), "op %d: %v", i%3, err)
		}
	})
}

func init() {
	// sem-churn rewrites the count word of a Semaphore at the start of
	// the segment as fast as it can, without a pause, until killed. With
	// IPC_MODE=zero it stores 0 each time, with max the maximum; otherwise
	// mostly a new nonzero value each time, and now and then 0 and the
	// maximum.
	children["sem-churn"] = func(seg *shm.Segment) {
		count := (*uint32)(unsafe.Pointer(&seg.Bytes()[0]))
		mode := os.Getenv("IPC_MODE")
		say("ready")
		for i := uint32(2); ; i++ {
			switch {
			case mode == "zero":
				atomic.StoreUint32(count, 0)
			case mode == "max":
				atomic.StoreUint32(count, math.MaxUint32)
			case i%16 == 0:
				atomic.StoreUint32(count, 0)
			case i%16 == 1:
				atomic.StoreUint32(count, math.MaxUint32)
			default:
				atomic.StoreUint32(count, i)
			}
		}
	}
}

// A peer that rewrites the count without end can make every
// compare-and-swap of a call lose, and keeps the futex from sleeping
// (the word is never the 0 it waits on). Every call still returns: Give
// and TryTake after at most casTries swaps, with ErrBusy (or ErrOverflow
// on a count at its maximum); TakeDeadline by its deadline, with
// ErrTimeout, checking it on every pass; a deadline already past after
// one TryTake. Each may also succeed on a value the peer wrote. A peer
// that keeps storing 0 gets ErrBusy and ErrTimeout, one that keeps
// storing the maximum ErrOverflow, every time.
func TestSemaphoreWhileAPeerRewritesTheCount(t *testing.T) {
	t.Parallel()
	seg := newSeg(t, 64)
	s := (*Semaphore)(unsafe.Pointer(&seg.Bytes()[0]))
	rounds := rttest.Rounds(hostileOps / 10)

	p := startChild(t, "sem-churn", seg)
	p.expect(t, "ready")
	var gave, took, timedOut, busy, overflow int
	tally := func(err error) {
		switch {
		case err == nil:
		case errors.Is(err, ErrOverflow):
			overflow++
		case errors.Is(err, ErrTimeout):
			timedOut++
		case errors.Is(err, ErrBusy):
			busy++
		}
	}
	finishes(t, "semaphore under a churning count", func() {
		for range rounds {
			err := s.Give()
			require.True(t, typed(err, ErrBusy, ErrOverflow), "Give: %v", err)
			if err == nil {
				gave++
			}
			tally(err)
			err = s.TryTake()
			require.True(t, typed(err, ErrBusy), "TryTake: %v", err)
			if err == nil {
				took++
			}
			tally(err)
			err = s.TakeDeadline(sys.Nanotime() + 20_000)
			require.True(t, typed(err, ErrTimeout), "TakeDeadline: %v", err)
			tally(err)
			err = s.TakeDeadline(1)
			require.True(t, typed(err, ErrTimeout), "TakeDeadline in the past: %v", err)
			tally(err)
		}
	})
	p.kill(t)
	t.Logf("Give ok %d, TryTake ok %d, ErrBusy %d, ErrOverflow %d, ErrTimeout %d", gave, took, busy, overflow, timedOut)

	atomic.StoreUint32(&s.count, 0) // as the first phase's peer may have left it
	p = startChild(t, "sem-churn", seg, "IPC_MODE=zero")
	p.expect(t, "ready")
	finishes(t, "semaphore under a count kept at 0", func() {
		for range rounds / 10 {
			require.ErrorIs(t, s.TryTake(), ErrBusy)
			require.ErrorIs(t, s.TakeDeadline(sys.Nanotime()+20_000), ErrTimeout)
			require.ErrorIs(t, s.TakeDeadline(1), ErrTimeout)
		}
	})
	p.kill(t)

	atomic.StoreUint32(&s.count, math.MaxUint32)
	p = startChild(t, "sem-churn", seg, "IPC_MODE=max")
	p.expect(t, "ready")
	finishes(t, "semaphore under a count kept at its maximum", func() {
		for range rounds {
			require.ErrorIs(t, s.Give(), ErrOverflow)
		}
	})
	p.kill(t)

	atomic.StoreUint32(&s.count, 0)
	require.NoError(t, s.Give(), "the semaphore works once the peer is gone")
	require.NoError(t, s.TryTake())
}
