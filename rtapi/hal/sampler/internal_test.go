package sampler

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// newTestComponent makes component name on a sim-flavor HAL whose
// segments live in a temporary directory; newChannel makes channel 0 of
// cfg in it before it is ready.
func newTestComponent[C any](t testing.TB, name, cfg string, newChannel func(*hal.Component, int, string, []hal.Type, uint64) (C, error),
	depth uint64) (C, *hal.HAL, shm.Options) {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	o := shm.Options{Dir: t.TempDir(), Instance: rt.Instance()}
	h, err := hal.New(rt, hal.Options{ShmDir: o.Dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	c, err := h.NewComponent(name)
	require.NoError(t, err)
	types, err := ParseCfg(cfg)
	require.NoError(t, err)
	ch, err := newChannel(c, 0, cfg, types, depth)
	require.NoError(t, err)
	require.NoError(t, c.Ready())
	return ch, h, o
}

// newTestChannel makes sampler channel 0 with cfg.
func newTestChannel(t testing.TB, cfg string, depth uint64) (*channel, *hal.HAL, shm.Options) {
	t.Helper()
	return newTestComponent(t, "sampler", cfg, newChannel, depth)
}

// The per-cycle function allocates nothing, whether the sample fits or
// the ring is full.
func TestSampleAllocatesNothing(t *testing.T) {
	ch, _, _ := newTestChannel(t, "fbsulk", 100)
	var now int64
	allocs := testing.AllocsPerRun(1000, func() {
		now += 1000
		ch.sample(time.Microsecond, now)
	})
	assert.Zero(t, allocs)
	assert.NotZero(t, ch.dropped, "the ring filled up, so both paths ran")
}

// A reader's TryNext allocates nothing either, so halsampler keeps up
// with a fast thread without feeding its garbage collector.
func TestTryNextAllocatesNothing(t *testing.T) {
	ch, _, o := newTestChannel(t, "ffb", 100)
	rd, err := Attach(o, 0)
	require.NoError(t, err)
	defer rd.Close()
	allocs := testing.AllocsPerRun(1000, func() {
		ch.sample(time.Microsecond, 1)
		if _, err := rd.TryNext(); err != nil {
			t.Fatal(err)
		}
		if _, err := rd.TryNext(); !errors.Is(err, ipc.ErrEmpty) {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestParseCfg(t *testing.T) {
	t.Parallel()
	got, err := ParseCfg("fBsUlK")
	require.NoError(t, err)
	assert.Equal(t, []hal.Type{hal.TypeFloat, hal.TypeBit, hal.TypeS32, hal.TypeU32, hal.TypeS64, hal.TypeU64}, got)
	// r is LinuxCNC's other float letter (hal_stream_parse_types)
	got, err = ParseCfg("rR")
	require.NoError(t, err)
	assert.Equal(t, []hal.Type{hal.TypeFloat, hal.TypeFloat}, got)
	for _, bad := range []string{"", "x", "f f", "f\x00", strings.Repeat("b", MaxPins+1)} {
		_, err := ParseCfg(bad)
		assert.ErrorIs(t, err, rtapi.ErrInvalid, "%q", bad)
	}
}

func TestRingCapacityHoldsDepth(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 3, 16, MaxPins} {
		for _, depth := range []uint64{1, 2, 7, 1000, 4000} {
			c := ringCapacity(n, depth)
			require.NotZero(t, c)
			// worst case: one record's room lost to the skip at the wrap
			assert.GreaterOrEqual(t, c-(recordBytes(n)+8), int(depth)*(recordBytes(n)+8), "n=%d depth=%d", n, depth)
			assert.LessOrEqual(t, recordBytes(n), c/2-8, "a record fits MaxRecord")
		}
	}
	assert.Zero(t, ringCapacity(1, 0))
	assert.Zero(t, ringCapacity(MaxPins, 1<<40))
	assert.Zero(t, ringCapacity(1, ^uint64(0)))
}

// A segment another process damaged is refused with ErrCorrupt, field by
// field, by the sampler's Attach and the streamer's AttachWriter alike
// (one header, one check); a record of the wrong length is ErrCorrupt at
// TryNext, after which the reader goes on.
func TestReaderRefusesDamage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(h *header)
	}{
		{"magic", func(h *header) { atomic.StoreUint64(&h.Magic, 1) }},
		{"version", func(h *header) { h.Version = 99 }},
		{"no pins", func(h *header) { h.NPins = 0 }},
		{"too many pins", func(h *header) { h.NPins = MaxPins + 1 }},
		{"more pins than cfg", func(h *header) { h.NPins = 3 }},
		{"bad letter", func(h *header) { h.Cfg[0] = 'x' }},
		{"depth", func(h *header) { h.Depth = 1 << 40 }},
		{"bigger depth", func(h *header) { h.Depth *= 64 }},
		{"data offset", func(h *header) { h.DataOff = 64 }},
		{"data size", func(h *header) { h.DataSize = 1 << 62 }},
	} {
		for _, k := range []*kind{samplerKind, streamerKind} {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				var o shm.Options
				var attachPeer func() error
				if k == samplerKind {
					_, _, o = newTestChannel(t, "ff", 100)
					attachPeer = func() error { _, err := Attach(o, 0); return err }
				} else {
					_, _, _, o = newTestStreamer(t, "ff", 100)
					attachPeer = func() error { _, err := AttachWriter(o, 0); return err }
				}
				seg, err := shm.Attach(o, k.key)
				require.NoError(t, err)
				defer seg.Close()
				tc.damage((*header)(unsafe.Pointer(&seg.Bytes()[0])))
				err = attachPeer()
				assert.ErrorIs(t, err, ErrCorrupt)
				assert.ErrorIs(t, err, rtapi.ErrCorrupt)
			})
		}
	}
	t.Run("record", func(t *testing.T) {
		ch, _, o := newTestChannel(t, "ff", 100)
		rd, err := Attach(o, 0)
		require.NoError(t, err)
		defer rd.Close()
		// a record with one word too few, as a hostile writer would put
		require.NoError(t, ch.ring.Put(make([]byte, recordBytes(2)-8)))
		_, err = rd.TryNext()
		assert.ErrorIs(t, err, ErrCorrupt)
		ch.sample(time.Millisecond, 5)
		s, err := rd.TryNext()
		require.NoError(t, err)
		assert.EqualValues(t, 5, s.Time)
		_, err = rd.TryNext()
		assert.ErrorIs(t, err, ipc.ErrEmpty)
	})
	t.Run("channel", func(t *testing.T) {
		_, err := Attach(shm.Options{Dir: t.TempDir()}, MaxChannels)
		assert.ErrorIs(t, err, rtapi.ErrInvalid)
		_, err = Attach(shm.Options{Dir: t.TempDir()}, 0)
		assert.True(t, errors.Is(err, shm.ErrNotExist), "%v", err)
		_, err = AttachWriter(shm.Options{Dir: t.TempDir()}, MaxStreamChannels)
		assert.ErrorIs(t, err, rtapi.ErrInvalid)
		_, err = AttachWriter(shm.Options{Dir: t.TempDir()}, 0)
		assert.True(t, errors.Is(err, shm.ErrNotExist), "%v", err)
	})
}

// BenchmarkSample is the cost of one cycle of the sampler with n pins,
// with a reader keeping the ring from filling. ns/op over pins is the
// cost per sampled pin (docs/BENCHMARKS.md).
func BenchmarkSample(b *testing.B) {
	for _, n := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("pins=%d", n), func(b *testing.B) {
			ch, _, o := newTestChannel(b, strings.Repeat("f", n), 4096)
			rd, err := Attach(o, 0)
			require.NoError(b, err)
			defer rd.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				ch.sample(time.Microsecond, int64(i))
				if i%1024 == 1023 {
					b.StopTimer()
					for {
						if _, err := rd.TryNext(); err != nil {
							break
						}
					}
					b.StartTimer()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pin")
			if ch.dropped != 0 {
				b.Fatalf("%d dropped", ch.dropped)
			}
		})
	}
}

// FuzzReaderSegment writes arbitrary bytes over a channel's header and
// ring header, then opens and reads it: never a panic, a read outside
// the segment or a loop without bound.
func FuzzReaderSegment(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, uint16(headerSize+8))
	ch, _, o := newTestChannel(f, "fbl", 50)
	seg, err := shm.Attach(o, Key)
	require.NoError(f, err)
	defer seg.Close()
	mem := seg.Bytes()
	for i := range 20 {
		ch.sample(time.Millisecond, int64(i))
	}
	pristine := append([]byte(nil), mem[:headerSize+ipc.RingHeaderSize]...)
	f.Fuzz(func(t *testing.T, data []byte, at uint16) {
		copy(mem, pristine)
		off := int(at) % (headerSize + ipc.RingHeaderSize)
		copy(mem[off:headerSize+ipc.RingHeaderSize], data)
		rd, err := open(seg)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ipc.ErrCorrupt) && !errors.Is(err, ipc.ErrNotInitialised) && !errors.Is(err, ipc.ErrWrongMode) {
				t.Fatalf("open: %v", err)
			}
			return
		}
		for range 200 {
			s, err := rd.TryNext()
			if err != nil {
				continue
			}
			if len(s.Values) != len(rd.Types()) {
				t.Fatalf("%d values for %d pins", len(s.Values), len(rd.Types()))
			}
		}
	})
}

// A channel holds depth-1 samples and curr-depth never passes depth, as
// LinuxCNC's hal_stream (one slot of depth kept empty): while samples fit
// curr-depth is the samples in the ring and full is FALSE; once none fits
// each sample is dropped and counted in overruns, full is TRUE and
// curr-depth is depth (hal_stream_maxdepth). Issue 36 item 6: depth=4000
// with ten pins read 4681, the records that fit the ring's power-of-two
// bytes.
func TestChannelFillsToDepthAsLinuxCNC(t *testing.T) {
	for _, cfg := range []string{"f", "ffffffffff"} {
		for _, depth := range []uint64{1, 2, 10, 4000} {
			ch, _, o := newTestChannel(t, cfg, depth)
			for k := uint64(1); k < depth; k++ {
				ch.sample(time.Microsecond, int64(k))
				require.EqualValues(t, k, ch.currDepth.Get(), "cfg %s depth %d after %d samples", cfg, depth, k)
				require.False(t, ch.full.Get(), "cfg %s depth %d after %d samples", cfg, depth, k)
			}
			const extra = 50
			for range extra + 1 {
				ch.sample(time.Microsecond, 0)
			}
			assert.EqualValues(t, depth, ch.currDepth.Get(), "cfg %s depth %d", cfg, depth)
			assert.True(t, ch.full.Get(), "cfg %s depth %d", cfg, depth)
			assert.EqualValues(t, extra+1, ch.overruns.Get(), "cfg %s depth %d", cfg, depth)

			ch.enable.Set(false) // disabled: the fill as it is, as LinuxCNC's
			ch.sample(time.Microsecond, 0)
			assert.EqualValues(t, depth-1, ch.currDepth.Get(), "cfg %s depth %d disabled", cfg, depth)
			assert.True(t, ch.full.Get(), "cfg %s depth %d disabled", cfg, depth)
			ch.enable.Set(true)

			rd, err := Attach(o, 0)
			require.NoError(t, err)
			n := uint64(0)
			for ; ; n++ {
				if _, err := rd.TryNext(); err != nil {
					require.ErrorIs(t, err, ipc.ErrEmpty)
					break
				}
			}
			require.NoError(t, rd.Close())
			assert.Equal(t, depth-1, n, "cfg %s depth %d: samples held", cfg, depth)
		}
	}
}
