//go:build linux

package hal

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// statsFixture publishes a valid stats segment (two threads, three
// functions) in a temporary directory and opens a Monitor on it. reset
// puts the segment back to that state.
func statsFixture(t testing.TB) (p *publisher, m *View, reset func()) {
	dir := t.TempDir()
	p, err := newPublisher(shm.Options{Dir: dir, Prefault: true}, 0x5eed)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.close() })
	for i, n := range []string{"a.update", "b.update", "c.update"} {
		f := p.funct(i, n)
		atomic.StoreInt64(&f.Calls, int64(10*i))
	}
	p.setThreads(2, 1000)
	for i, name := range []string{"base", "servo"} {
		var r threadRecord
		copy(r.Name[:], name)
		r.Period, r.NFuncts = int64(1000*(i+1)), int64(i+1)
		r.Chain[0], r.Chain[1] = 2, 0
		p.thread(i).Write(&r)
	}
	valid := append([]byte(nil), p.seg.Bytes()...)
	m, err = OpenView(ViewOptions{StatsKey: 0x5eed, Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	s, err := m.Read()
	require.NoError(t, err)
	require.Len(t, s.Threads, 2)
	require.Equal(t, "a.update", s.Threads[1].Functs[1].Name)
	return p, m, func() { copy(p.seg.Bytes(), valid) }
}

func writeRecord(p *publisher, slot int, edit func(*threadRecord)) {
	var r threadRecord
	p.thread(slot).Read(&r)
	edit(&r)
	p.thread(slot).Write(&r)
}

// Every count and index another process can write, set to values outside
// the layout: Read reports ErrCorrupt, never panics, and reads again once
// the segment is sane.
func TestMonitorRefusesCorruptValues(t *testing.T) {
	p, m, reset := statsFixture(t)
	h := &p.layout.Header
	cases := map[string]func(){
		"thread count high":     func() { atomic.StoreInt64(&h.NThreads, MaxThreads+1) },
		"thread count negative": func() { atomic.StoreInt64(&h.NThreads, -1) },
		"thread count huge":     func() { atomic.StoreInt64(&h.NThreads, 1<<62) },
		"exported high":         func() { atomic.StoreInt64(&h.NExported, MaxExported+1) },
		"exported negative":     func() { atomic.StoreInt64(&h.NExported, -7) },
		"magic":                 func() { atomic.StoreUint64(&h.Magic, 0xbad) },
		"version":               func() { atomic.StoreUint32(&h.Version, 99) },
		"limits":                func() { atomic.StoreUint32(&h.MaxFuncts, 1<<31) },
		"chain length high":     func() { writeRecord(p, 1, func(r *threadRecord) { r.NFuncts = MaxFuncts + 1 }) },
		"chain length negative": func() { writeRecord(p, 0, func(r *threadRecord) { r.NFuncts = -1 }) },
		"chain index past exported": func() {
			writeRecord(p, 1, func(r *threadRecord) { r.Chain[1] = 3 })
		},
		"chain index past the table": func() {
			atomic.StoreInt64(&h.NExported, MaxExported)
			writeRecord(p, 1, func(r *threadRecord) { r.Chain[0] = 0xffff })
		},
	}
	for name, corrupt := range cases {
		t.Run(name, func(t *testing.T) {
			reset()
			corrupt()
			s, err := m.Read()
			require.ErrorIs(t, err, ErrCorrupt)
			assert.ErrorIs(t, err, shm.ErrCorrupt)
			assert.ErrorIs(t, err, rtapi.ErrInvalid)
			assert.Empty(t, s.Threads)
			reset()
			_, err = m.Read()
			require.NoError(t, err, "the monitor stays usable")
		})
	}
	// Wrong data is data: names without a terminator, odd states and
	// timings are shown, not refused. The states include ones whose low
	// 32 bits are a valid state or negative, which a 32-bit build once
	// checked as an int and then used whole as an index (it panicked in
	// TestMonitorUnderHostileWriter on linux/386).
	for _, state := range []int64{-5, 4, 1<<32 | 1, 0x3535f981b220b040, -1 << 63} {
		reset()
		writeRecord(p, 0, func(r *threadRecord) {
			for i := range r.Name {
				r.Name[i] = 0xff
			}
			r.State, r.Period = state, -1
		})
		s, err := m.Read()
		require.NoError(t, err)
		assert.Len(t, s.Threads[0].Name, NameLen)
		assert.Equal(t, "unknown", s.Threads[0].State, "state %#x", state)
	}
}

// A writer that completes a Write during every copy used to keep Read
// spinning for as long as it wrote (the Monitor, and whoever waited on it,
// hung); now Read gives up after a bounded number of copies.
func TestMonitorReadBoundedUnderRacingWriter(t *testing.T) {
	p, m, _ := statsFixture(t)
	// Every copy Read makes races a writer and loses: the copy is real,
	// then a Write lands before the sequence is checked again.
	copies := 0
	t.Cleanup(func() { tryReadRecord = (*ipc.Seqlock[threadRecord]).TryRead })
	tryReadRecord = func(s *ipc.Seqlock[threadRecord], r *threadRecord) (uint64, bool) {
		copies++
		seq, _ := s.TryRead(r)
		// The writer's Write, completed during the copy, through the
		// publisher's mapping: the monitor's is read-only.
		slot := (uintptr(unsafe.Pointer(s)) - uintptr(unsafe.Pointer(&m.sl.Threads[0]))) / unsafe.Sizeof(*s)
		p.thread(int(slot)).Write(r)
		return seq, seq == s.Seq()
	}
	_, err := m.Read()
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "changed during each of")
	assert.Equal(t, maxReadTries, copies, "Read gives up after a bounded number of copies")
}

// FuzzMonitorRead applies arbitrary writes to a stats segment after the
// Monitor opened it, as a hostile process would, and checks that Read
// returns data or ErrCorrupt and nothing else.
func FuzzMonitorRead(f *testing.F) {
	f.Add([]byte{})
	f.Add(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 40), 0xffffffff))
	hdr := unsafe.Offsetof(statsLayout{}.Header)
	nthreads := uint32(hdr + unsafe.Offsetof(statsHeader{}.NThreads))
	f.Add(append(binary.LittleEndian.AppendUint32(nil, nthreads), 9, 0, 0, 0, 0, 0, 0, 0))
	slot := uint32(unsafe.Offsetof(statsLayout{}.Threads))
	f.Add(append(binary.LittleEndian.AppendUint32(nil, slot), 1, 0, 0, 0, 0, 0, 0, 0))
	p, m, reset := statsFixture(f)
	mem := p.seg.Bytes()
	f.Fuzz(func(t *testing.T, edits []byte) {
		reset()
		// edits: (offset uint32, length byte, bytes...) repeated.
		for len(edits) >= 5 {
			off := int(binary.LittleEndian.Uint32(edits) % uint32(len(mem)))
			n := min(int(edits[4]), len(edits)-5, len(mem)-off)
			copy(mem[off:off+n], edits[5:5+n])
			edits = edits[5+n:]
		}
		s, err := m.Read()
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Read: %v, want data or ErrCorrupt", err)
			}
			return
		}
		if len(s.Threads) > MaxThreads {
			t.Fatalf("%d threads", len(s.Threads))
		}
		for _, th := range s.Threads {
			if len(th.Functs) > MaxFuncts {
				t.Fatalf("%d functions", len(th.Functs))
			}
		}
	})
}

// ScribbleStats is the hostile writer of TestMonitorUnderHostileWriter, run
// in a child process: it maps the stats segment file at path and makes n
// writes into it, half of them random bytes at random places, half chosen
// values in the fields a reader bounds itself by (counts, chain lengths and
// indexes, sequence words, magic).
func ScribbleStats(path string, n int, seed uint64) error {
	var l statsLayout
	base := uintptr(unsafe.Pointer(&l))
	off := func(p unsafe.Pointer) int { return int(uintptr(p) - base) }
	slot := func(i int) int { return off(unsafe.Pointer(&l.Threads[i])) }
	// A seqlock is its sequence word, padding to 64 bytes, then two copies
	// of the record, each padded to 8 bytes.
	recSize := (int(unsafe.Sizeof(threadRecord{})) + 7) &^ 7
	targets := []int{
		off(unsafe.Pointer(&l.Header.NThreads)), off(unsafe.Pointer(&l.Header.NExported)),
		off(unsafe.Pointer(&l.Header.Magic)), off(unsafe.Pointer(&l.Header.MaxFuncts)),
	}
	for i := range MaxThreads {
		targets = append(targets, slot(i)) // sequence
		for copy := range 2 {
			r := slot(i) + 64 + copy*recSize
			targets = append(targets, r+int(unsafe.Offsetof(threadRecord{}.NFuncts)), r+int(unsafe.Offsetof(threadRecord{}.Chain)))
		}
	}
	values := []uint64{0, 1, 2, MaxThreads, MaxThreads + 1, MaxFuncts + 1, MaxExported + 1, 1 << 31, 1 << 62, ^uint64(0), 0xffff}
	return scribble(path, n, rand.New(rand.NewPCG(seed, 1)), targets, values)
}
