//go:build linux

package hal

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

func TestDataLayout(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	rttest.RequireLayout64(t, reflect.TypeFor[dataLayout]())
	assert.Zero(t, unsafe.Sizeof(dataHeader{})%64, "the tables start on a cache line")
	for _, s := range []uintptr{unsafe.Sizeof(compEntry{}), unsafe.Sizeof(pinEntry{}),
		unsafe.Sizeof(paramEntry{}), unsafe.Sizeof(sigEntry{})} {
		assert.Equal(t, uintptr(64), s, "every entry is one cache line")
	}
}

// A component's pins, parameters and signals keep their words packed in
// the values area in the order they were made, and their handles' cells
// next to each other: a word or a pointer apart, as hal_malloc's pins
// (issue 41).
// The segment's readers find them there.
func TestValuesPacked(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, d, _, _ := dataFixture(t)
	addr := func(p any) uintptr { return uintptr(reflect.ValueOf(p).UnsafePointer()) }
	b := h.pins["b.in"]
	e := h.pins["b.enable"]
	assert.Equal(t, uintptr(8), addr(e.own)-addr(b.own), "pin words")
	cell := unsafe.Sizeof(word{}) // a pointer: 4 bytes on 32-bit Linux
	assert.Equal(t, cell, addr(e.ref)-addr(b.ref), "pin cells")
	g, c := h.params["a.gain"], h.params["a.count"]
	assert.Equal(t, uintptr(8), addr(c.ref.Load())-addr(g.ref.Load()), "parameter words")
	assert.Equal(t, cell, addr(c.ref)-addr(g.ref), "parameter cells")
	assert.Equal(t, uintptr(8), addr(h.sigs["spare"].value)-addr(h.sigs["cmd"].value), "signal words")

	atomic.StoreUint64(&h.data.l.Values.Pins[e.index], 1)
	atomic.StoreUint64(&h.data.l.Values.Params[c.index], 7)
	atomic.StoreUint64(&h.data.l.Values.Signals[h.sigs["spare"].index], 1)
	s, err := d.Read()
	require.NoError(t, err)
	assert.Equal(t, uint64(1), s.Pins[2].Value, s.Pins[2].Name)
	assert.Equal(t, uint64(7), s.Params[1].Value, s.Params[1].Name)
	assert.Equal(t, uint64(1), s.Signals[1].Value, s.Signals[1].Name)
}

// dataFixture makes a host HAL sharing its data segment in a temporary
// directory, with two components, a few pins, a parameter and two
// signals, and opens a View of it as another process would. reset
// puts the segment back to that state.
func dataFixture(t testing.TB) (h *HAL, d *View, mem []byte, reset func()) {
	dir := t.TempDir()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err = New(rt, Options{DataKey: 0xda7a, ShmDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	a, _ := h.NewComponent("a")
	a.Float("a.out", Out).Set(1.5)
	a.FloatParam("a.gain", RW).Set(2)
	a.S32Param("a.count", RO)
	require.NoError(t, a.Ready())
	b, _ := h.NewComponent("b")
	b.Float("b.in", In)
	b.Bit("b.enable", In)
	require.NoError(t, b.Ready())
	require.NoError(t, h.Net("cmd", "a.out", "b.in"))
	require.NoError(t, h.NewSignal("spare", TypeBit))
	d, err = OpenView(ViewOptions{DataKey: 0xda7a, Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	mem = h.data.seg.Bytes()
	valid := append([]byte(nil), mem...)
	s, err := d.Read()
	require.NoError(t, err)
	require.Len(t, s.Pins, 3)
	return h, d, mem, func() { copy(mem, valid) }
}

func TestDataReadFromAnotherAttachment(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, d, _, _ := dataFixture(t)
	s, err := d.Read()
	require.NoError(t, err)
	assert.Equal(t, []CompInfo{{Name: "a", PID: os.Getpid(), Ready: true, ID: 4}, {Name: "b", PID: os.Getpid(), Ready: true, ID: 5}}, s.Comps)
	assert.Equal(t, PinInfo{Owner: "b", OwnerID: 5, Name: "b.in", Type: TypeFloat, Dir: In, Value: 0x3ff8000000000000, Signal: "cmd"}, s.Pins[1])
	require.Len(t, s.Signals, 2)
	assert.Equal(t, []string{"a.out", "b.in"}, s.Signals[0].Pins)
	assert.Equal(t, "a.out", s.Signals[0].Writer)

	require.NoError(t, h.DeleteSignal("cmd"))
	s, err = d.Read()
	require.NoError(t, err)
	assert.Len(t, s.Signals, 1, "a deleted signal is not shown")
	assert.Empty(t, s.Pins[1].Signal)
}

// A data segment left by a host that died is replaced; a closed HAL
// leaves none.
func TestDataSegmentRemovedOnClose(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, d, _, _ := dataFixture(t)
	name := h.DataSegment()
	require.NotEmpty(t, name)
	require.NoError(t, h.Close())
	s, err := d.Read()
	require.NoError(t, err, "an attachment keeps its memory after the host removed the name")
	assert.True(t, s.HostClosed)
	ok, err := shm.Exists(shm.Options{Dir: h.opts.ShmDir}, 0xda7a)
	require.NoError(t, err)
	assert.False(t, ok)
}

// Every count, index, type and direction another process can write, set
// to values outside the layout: Read reports ErrCorrupt, never panics,
// and reads again once the segment is sane. The host's own pins are not
// redirected: only their values can be made wrong.
func TestDataRefusesCorruptValues(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, d, _, reset := dataFixture(t)
	l := h.data.l
	hd := &l.Header
	cases := map[string]func(){
		"comp count high":    func() { atomic.StoreInt64(&hd.NComps, MaxComps+1) },
		"pin count negative": func() { atomic.StoreInt64(&hd.NPins, -1) },
		"param count huge":   func() { atomic.StoreInt64(&hd.NParams, 1<<62) },
		"signal count high":  func() { atomic.StoreInt64(&hd.NSignals, MaxSignals+1) },
		"magic":              func() { atomic.StoreUint64(&hd.Magic, 1) },
		"limits":             func() { atomic.StoreUint32(&hd.MaxPins, 1<<31) },
		"layout 1":           func() { atomic.StoreUint32(&hd.Version, 1) },
		"pin owner":          func() { l.Pins[1].Comp = 0xffff },
		"pin type":           func() { l.Pins[1].Type = 9 },
		"pin dir":            func() { l.Pins[1].Dir = 0 },
		"pin link past":      func() { atomic.StoreUint32(&l.Pins[2].Signal, 0xffffffff) },
		"pin link unused":    func() { atomic.StoreUint32(&l.Pins[2].Signal, 3) },
		"pin link to dead":   func() { atomic.StoreUint64(&l.Signals[0].Info, 0) },
		"link type mismatch": func() { atomic.StoreUint32(&l.Pins[2].Signal, 1) },
		"param dir":          func() { l.Params[0].Dir = 7 },
		"signal type":        func() { atomic.StoreUint64(&l.Signals[1].Info, packSigInfo(0, true, 0, 0, 0)) },
	}
	for name, corrupt := range cases {
		t.Run(name, func(t *testing.T) {
			reset()
			corrupt()
			_, err := d.Read()
			require.ErrorIs(t, err, ErrCorrupt)
			assert.ErrorIs(t, err, rtapi.ErrInvalid)
			reset()
			_, err = d.Read()
			require.NoError(t, err, "the reader stays usable")
		})
	}
	// Links written into the segment do not move the host's pins.
	reset()
	atomic.StoreUint32(&l.Pins[2].Signal, 1)
	v, err := h.GetP("b.enable")
	require.NoError(t, err)
	assert.Equal(t, "FALSE", v)
	// Names without a terminator or with control characters are shown,
	// made harmless.
	reset()
	for i := range l.Comps[0].Name {
		l.Comps[0].Name[i] = 0x1b
	}
	s, err := d.Read()
	require.NoError(t, err)
	assert.Equal(t, repeat('?', NameLen), s.Comps[0].Name)
}

func repeat(c byte, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

// A host that keeps the wiring's generation odd (or a writer that does)
// cannot hold a reader forever: Read gives up with ErrBusy.
func TestDataReadBoundedWhileGenerationOdd(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, d, _, _ := dataFixture(t)
	atomic.StoreUint64(&h.data.l.Header.Gen, 1)
	_, err := d.Read()
	require.ErrorIs(t, err, rtapi.ErrBusy)
}

// FuzzDataRead applies arbitrary writes to a data segment after Data
// attached, as a hostile process would: Read returns data or ErrCorrupt
// (or ErrBusy for a generation left odd) and nothing else.
func FuzzDataRead(f *testing.F) {
	f.Add([]byte{})
	npins := uint32(unsafe.Offsetof(dataHeader{}.NPins))
	f.Add(append(binary.LittleEndian.AppendUint32(nil, npins), 8, 0xff, 0xff, 0, 0, 0, 0, 0, 0))
	link := uint32(unsafe.Offsetof(dataLayout{}.Pins) + unsafe.Sizeof(pinEntry{}) + unsafe.Offsetof(pinEntry{}.Signal))
	f.Add(append(binary.LittleEndian.AppendUint32(nil, link), 4, 9, 0, 0, 0))
	_, d, mem, reset := dataFixture(f)
	f.Fuzz(func(t *testing.T, edits []byte) {
		reset()
		for len(edits) >= 5 {
			off := int(binary.LittleEndian.Uint32(edits) % uint32(len(mem)))
			n := min(int(edits[4]), len(edits)-5, len(mem)-off)
			copy(mem[off:off+n], edits[5:5+n])
			edits = edits[5+n:]
		}
		s, err := d.Read()
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, rtapi.ErrBusy) {
				t.Fatalf("Read: %v, want data, ErrCorrupt or ErrBusy", err)
			}
			return
		}
		if len(s.Pins) > MaxPins || len(s.Signals) > MaxSignals || len(s.Comps) > MaxComps || len(s.Params) > MaxParams {
			t.Fatalf("counts %d %d %d %d", len(s.Pins), len(s.Signals), len(s.Comps), len(s.Params))
		}
	})
}

// ScribbleData is the hostile writer of TestDataUnderHostileWriter, run in
// a child process: n writes into the data segment file at path, half
// random bytes at random places, half chosen values in the counts, links,
// types and generation a reader bounds itself by.
func ScribbleData(path string, n int, seed uint64) error {
	var l dataLayout
	base := uintptr(unsafe.Pointer(&l))
	off := func(p unsafe.Pointer) int { return int(uintptr(p) - base) }
	targets := []int{
		off(unsafe.Pointer(&l.Header.NComps)), off(unsafe.Pointer(&l.Header.NPins)), off(unsafe.Pointer(&l.Header.NParams)),
		off(unsafe.Pointer(&l.Header.NSignals)), off(unsafe.Pointer(&l.Header.Gen)), off(unsafe.Pointer(&l.Header.Magic)),
	}
	for i := range 8 {
		targets = append(targets, off(unsafe.Pointer(&l.Pins[i].Signal)), off(unsafe.Pointer(&l.Values.Pins[i])),
			off(unsafe.Pointer(&l.Signals[i].Info)), off(unsafe.Pointer(&l.Values.Params[i])), off(unsafe.Pointer(&l.Values.Signals[i])))
	}
	values := []uint64{0, 1, 2, 3, MaxComps + 1, MaxPins + 1, 1 << 31, 1 << 62, ^uint64(0), 0xffff}
	return scribble(path, n, rand.New(rand.NewPCG(seed, 2)), targets, values)
}

// scribble maps the segment file at path and makes n 64-bit writes into
// its body: half random words at random places, half one of values at one
// of targets (offsets into the body).
func scribble(path string, n int, rng *rand.Rand, targets []int, values []uint64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	defer unix.Munmap(mem)
	data := mem[shm.HeaderSize:]
	for range n {
		var at int
		var v uint64
		if rng.IntN(2) == 0 {
			at = rng.IntN(len(data) - 8)
			v = rng.Uint64()
		} else {
			at = targets[rng.IntN(len(targets))]
			v = values[rng.IntN(len(values))]
		}
		at &^= 7
		atomic.StoreUint64((*uint64)(unsafe.Pointer(&data[at])), v)
	}
	return nil
}

// After Close the data segment is unmapped: reads through the HAL are
// ErrClosed, not a fault.
func TestDataCallsAfterClose(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, _, _, _ := dataFixture(t)
	require.NoError(t, h.Close())
	_, err := h.GetP("a.gain")
	assert.ErrorIs(t, err, rtapi.ErrClosed)
	_, err = h.GetS("cmd")
	assert.ErrorIs(t, err, rtapi.ErrClosed)
	_, err = h.View().Read()
	assert.ErrorIs(t, err, rtapi.ErrClosed)
	assert.ErrorIs(t, h.Save(io.Discard), rtapi.ErrClosed)
	assert.ErrorIs(t, h.Show(io.Discard, "pin", ""), rtapi.ErrClosed)
}
