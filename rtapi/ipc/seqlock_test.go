//go:build linux

package ipc

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/shm"
)

type snapshot struct {
	Seq  uint64
	Pos  [6]float64
	Copy uint64 // == Seq in every consistent snapshot
}

func TestSeqlockBasics(t *testing.T) {
	t.Parallel()
	var s Seqlock[snapshot]
	var got snapshot
	assert.Equal(t, uint64(0), s.Read(&got))
	assert.Equal(t, snapshot{}, got)
	s.Write(&snapshot{Seq: 1, Pos: [6]float64{1, 2, 3}, Copy: 1})
	assert.Equal(t, uint64(1), s.Read(&got))
	assert.Equal(t, 2.0, got.Pos[1])
	s.Write(&snapshot{Seq: 2, Copy: 2})
	seq, ok := s.TryRead(&got)
	assert.True(t, ok)
	assert.Equal(t, uint64(2), seq)
	assert.Equal(t, uint64(2), got.Copy)
	assert.Equal(t, uint64(2), s.Seq())
}

func TestSeqlockOddSizes(t *testing.T) {
	t.Parallel()
	var a Seqlock[[13]byte]
	in := [13]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	a.Write(&in)
	var out [13]byte
	a.Read(&out)
	assert.Equal(t, in, out)

	type mixed struct {
		A uint32
		B uint16
		C [3]byte
	}
	var b Seqlock[mixed]
	b.Write(&mixed{A: 7, B: 9, C: [3]byte{1, 2, 3}})
	var m mixed
	b.Read(&m)
	assert.Equal(t, mixed{A: 7, B: 9, C: [3]byte{1, 2, 3}}, m)

	var c Seqlock[struct{}]
	c.Write(&struct{}{})
	var e struct{}
	c.Read(&e)
}

func TestSeqlockNeverTorn(t *testing.T) {
	t.Parallel()
	var s Seqlock[snapshot]
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got snapshot
			last := uint64(0)
			for !stop.Load() {
				seq := s.Read(&got)
				if got.Seq != got.Copy || got.Pos[5] != float64(got.Seq) {
					t.Errorf("torn snapshot %+v", got)
					return
				}
				if seq < last {
					t.Errorf("sequence went back %d < %d", seq, last)
				}
				last = seq
			}
		}()
	}
	for i := uint64(1); i <= 50000; i++ {
		s.Write(&snapshot{Seq: i, Pos: [6]float64{5: float64(i)}, Copy: i})
	}
	stop.Store(true)
	wg.Wait()
}

func TestSeqlockAllocs(t *testing.T) {
	var s Seqlock[snapshot]
	v := snapshot{Seq: 1}
	var got snapshot
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		s.Write(&v)
		s.Read(&got)
		s.TryRead(&got)
	}))
}

func init() {
	children["seqlock-writer"] = func(seg *shm.Segment) {
		s, _ := shm.View[Seqlock[snapshot]](seg, 0)
		say("writing")
		for i := uint64(1); ; i++ {
			s.Write(&snapshot{Seq: i, Pos: [6]float64{float64(i), float64(i), float64(i), float64(i), float64(i), float64(i)}, Copy: i})
		}
	}
}

// A writer SIGKILLed mid-Write: readers keep getting the last complete
// snapshot, never a torn one, and never stall.
func TestSeqlockWriterKilled(t *testing.T) {
	t.Parallel()
	seg := newSeg(t, 4096)
	s, err := shm.View[Seqlock[snapshot]](seg, 0)
	require.NoError(t, err)
	p := startChild(t, "seqlock-writer", seg)
	p.expect(t, "writing")
	check := func(got snapshot) {
		for _, x := range got.Pos {
			require.Equal(t, float64(got.Seq), x, "torn: %+v", got)
		}
		require.Equal(t, got.Seq, got.Copy, "torn: %+v", got)
	}
	var got snapshot
	for s.Seq() < 1000 {
		runtime.Gosched()
	}
	for range 10000 {
		s.Read(&got)
		check(got)
	}
	p.kill(t)
	seq := s.Read(&got)
	check(got)
	assert.Equal(t, seq, got.Seq, "the last complete Write is what readers see")
	for range 1000 {
		_, ok := s.TryRead(&got)
		require.True(t, ok, "a dead writer never makes readers retry")
		check(got)
	}
}

func BenchmarkSeqlockRead(b *testing.B) {
	var s Seqlock[snapshot]
	s.Write(&snapshot{Seq: 1})
	var got snapshot
	for b.Loop() {
		s.Read(&got)
	}
}

func BenchmarkSeqlockWrite(b *testing.B) {
	var s Seqlock[snapshot]
	v := snapshot{Seq: 1}
	for b.Loop() {
		s.Write(&v)
	}
}

// BenchmarkSeqlockReadWhileWriting reads while another thread writes
// continuously: the cost of retries and cache-line transfers.
func BenchmarkSeqlockReadWhileWriting(b *testing.B) {
	var s Seqlock[snapshot]
	var stop atomic.Bool
	go func() {
		v := snapshot{}
		for !stop.Load() {
			v.Seq++
			s.Write(&v)
		}
	}()
	var got snapshot
	for b.Loop() {
		s.Read(&got)
	}
	stop.Store(true)
}

func init() {
	// The seqlock-spammer child bumps the sequence of the seqlock at offset
	// 0 of the segment as fast as it can, as a hostile writer would, until
	// killed.
	children["seqlock-spammer"] = func(seg *shm.Segment) {
		s, _ := shm.View[Seqlock[snapshot]](seg, 0)
		say("ready")
		for {
			atomic.AddUint64(&s.seq, 1)
		}
	}
}

// A process that bumps the sequence without end cannot keep ReadBounded
// looping: it returns, with a snapshot or ErrBusy.
func TestSeqlockReadBoundedAgainstSpammer(t *testing.T) {
	t.Parallel()
	seg := newSeg(t, 4096)
	s, err := shm.View[Seqlock[snapshot]](seg, 0)
	require.NoError(t, err)
	p := startChild(t, "seqlock-spammer", seg)
	p.expect(t, "ready")
	var got snapshot
	busy := 0
	for range 1000 {
		_, err := s.ReadBounded(&got, 4)
		if err != nil {
			require.ErrorIs(t, err, ErrBusy)
			busy++
		}
	}
	t.Logf("%d of 1000 bounded reads found the writer busy", busy)
	p.kill(t)
	_, err = s.ReadBounded(&got, 0)
	require.NoError(t, err, "a quiet seqlock reads at the first try")
}

func TestSeqlockReadBoundedAllocs(t *testing.T) {
	var s Seqlock[snapshot]
	var got snapshot
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = s.ReadBounded(&got, 8) }))
}

func BenchmarkSeqlockReadBounded(b *testing.B) {
	var s Seqlock[snapshot]
	s.Write(&snapshot{Seq: 1})
	var got snapshot
	for b.Loop() {
		_, _ = s.ReadBounded(&got, 16)
	}
}
