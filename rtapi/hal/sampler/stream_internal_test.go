package sampler

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// newTestStreamer loads "streamer cfg=CFG depth=DEPTH" on a sim-flavor
// HAL whose segments live in a temporary directory, and returns channel
// 0 and a Writer of it.
func newTestStreamer(t testing.TB, cfg string, depth int) (*streamChannel, *Writer, *hal.HAL, shm.Options) {
	t.Helper()
	ch, h, o := newTestComponent(t, "streamer", cfg, newStreamChannel, uint64(depth))
	w, err := AttachWriter(o, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return ch, w, h, o
}

// The streamer's function allocates nothing, whether it moves a sample
// or counts an underrun.
func TestStreamUpdateAllocatesNothing(t *testing.T) {
	ch, w, _, _ := newTestStreamer(t, "fbsulk", 100)
	vals := []uint64{math.Float64bits(1.5), 1, 2, 3, 4, 5}
	allocs := testing.AllocsPerRun(1000, func() {
		_ = w.TryWrite(vals)
		ch.update(time.Microsecond, 0)
		ch.update(time.Microsecond, 0)
	})
	assert.Zero(t, allocs)
	assert.NotZero(t, ch.underruns.Get(), "both paths ran")
}

// Samples reach the pins in order, one a call, each pin with its type's
// value; an empty FIFO counts an underrun and leaves the pins; the FIFO
// holds depth-1 samples, as LinuxCNC's hal_stream.
func TestStreamerMovesSamplesInOrder(t *testing.T) {
	ch, w, _, _ := newTestStreamer(t, "fbsulk", 4)
	assert.True(t, ch.empty.Get(), "empty is TRUE at load")
	assert.True(t, ch.enable.Get(), "enable is TRUE at load")
	rows := [][]uint64{
		{math.Float64bits(-2.5), 1, uint64(1<<64 - 7), 4000000000, uint64(1<<64 - 1), 1 << 63},
		{math.Float64bits(0.25), 0, 7, 1, 1 << 40, 9},
		{math.Float64bits(64), 1, 0, 0, 0, 0},
	}
	for _, r := range rows {
		require.NoError(t, w.TryWrite(r))
	}
	assert.ErrorIs(t, w.TryWrite(rows[0]), ErrFull, "depth 4 holds 3")
	n, err := w.Fill()
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	for i, r := range rows {
		ch.update(time.Microsecond, 0)
		assert.Equal(t, int32(len(rows)-i), ch.currDepth.Get(), "curr-depth is read before the sample is taken")
		assert.False(t, ch.empty.Get())
		assert.Equal(t, math.Float64frombits(r[0]), ch.pins[0].f.Get(), "row %d", i)
		assert.Equal(t, r[1] == 1, ch.pins[1].b.Get(), "row %d", i)
		assert.Equal(t, int32(uint32(r[2])), ch.pins[2].s.Get(), "row %d", i)
		assert.Equal(t, uint32(r[3]), ch.pins[3].u.Get(), "row %d", i)
		assert.Equal(t, int64(r[4]), ch.pins[4].l.Get(), "row %d", i)
		assert.Equal(t, r[5], ch.pins[5].k.Get(), "row %d", i)
	}
	assert.Zero(t, ch.underruns.Get())
	ch.update(time.Microsecond, 0)
	assert.True(t, ch.empty.Get())
	assert.Zero(t, ch.currDepth.Get())
	assert.Equal(t, int32(1), ch.underruns.Get())
	assert.Equal(t, 64.0, ch.pins[0].f.Get(), "an underrun leaves the pins")

	// disabled: depth reported, nothing taken, no underrun
	require.NoError(t, w.TryWrite(rows[1]))
	ch.enable.Set(false)
	ch.update(time.Microsecond, 0)
	assert.Equal(t, int32(1), ch.currDepth.Get())
	assert.Equal(t, int32(1), ch.underruns.Get())
	assert.Equal(t, 64.0, ch.pins[0].f.Get())
}

// clock-mode picks the calls that take a sample, from the last two
// clock states, as LinuxCNC's streamer: 0 (or any other value) every
// call, 1 falling edges, 2 rising edges, 3 both.
func TestStreamerClockModes(t *testing.T) {
	clock := []bool{false, true, true, false, false, true, false}
	for _, tc := range []struct {
		mode  int32
		taken []bool
	}{
		{0, []bool{true, true, true, true, true, true, true}},
		{1, []bool{false, false, false, true, false, false, true}},
		{2, []bool{false, true, false, false, false, true, false}},
		{3, []bool{false, true, false, true, false, true, true}},
		{7, []bool{true, true, true, true, true, true, true}},
	} {
		t.Run(strconv.Itoa(int(tc.mode)), func(t *testing.T) {
			ch, w, _, _ := newTestStreamer(t, "s", 20)
			for i := range clock {
				require.NoError(t, w.TryWrite([]uint64{uint64(i + 1)}))
			}
			ch.clockMode.Set(tc.mode)
			want := int32(0)
			for i, c := range clock {
				ch.clock.Set(c)
				ch.update(time.Microsecond, 0)
				if tc.taken[i] {
					want++
				}
				require.Equal(t, want, ch.pins[0].s.Get(), "call %d", i)
			}
			assert.Zero(t, ch.underruns.Get())
		})
	}
}

// A writer's index outside the FIFO (a damaged segment) reads as an
// empty FIFO; no memory outside it is touched. A new Writer refuses it.
func TestStreamerBadIndexIsEmpty(t *testing.T) {
	ch, w, _, _ := newTestStreamer(t, "ff", 8)
	require.NoError(t, w.TryWrite([]uint64{1, 2}))
	atomic.StoreUint32(&ch.hdr.In, 1<<31)
	ch.update(time.Microsecond, 0)
	assert.True(t, ch.empty.Get())
	assert.Equal(t, int32(1), ch.underruns.Get())
	_, err := openWriter(w.seg)
	assert.ErrorIs(t, err, ErrCorrupt)
	_, err = w.Fill()
	assert.ErrorIs(t, err, rtapi.ErrCorrupt)
}

// Write waits for room while the FIFO is full and gives up when its
// context ends.
func TestWriterWaitsForRoom(t *testing.T) {
	ch, w, _, _ := newTestStreamer(t, "b", 2)
	require.NoError(t, w.Write(context.Background(), []uint64{1}))
	done := make(chan error, 1)
	go func() { done <- w.Write(context.Background(), []uint64{0}) }()
	select {
	case err := <-done:
		t.Fatalf("Write returned %v on a full FIFO", err)
	case <-time.After(20 * time.Millisecond):
	}
	ch.update(time.Microsecond, 0)
	require.NoError(t, <-done)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, w.Write(ctx, []uint64{1}), context.Canceled)
}

// Write on a full FIFO gives up with ErrClosed once the host that made
// it has exited, rather than waiting for a thread that no longer runs.
func TestWriterEndsWhenHostExits(t *testing.T) {
	_, w, _, _ := newTestStreamer(t, "b", 2)
	require.NoError(t, w.TryWrite([]uint64{1}))
	processAlive = func(int) bool { return false }
	t.Cleanup(func() { processAlive = sys.ProcessAlive })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound, not a measure
	defer cancel()
	assert.ErrorIs(t, w.Write(ctx, []uint64{0}), rtapi.ErrClosed)
}

// AppendLinuxCNC prints every value of testdata/linuxcnc/format.input
// as LinuxCNC's halsampler, compiled from its sampler_usr.c with gcc
// (gen.sh), printed it: format.golden, byte for byte, with -t numbers.
func TestAppendLinuxCNCGolden(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile("testdata/linuxcnc/format.input")
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/linuxcnc/format.golden")
	require.NoError(t, err)
	var got []byte
	for i, line := range strings.Split(strings.TrimSuffix(string(in), "\n"), "\n") {
		letter, hex, ok := strings.Cut(line, " ")
		require.True(t, ok, line)
		types, err := ParseCfg(letter)
		require.NoError(t, err)
		w, err := strconv.ParseUint(hex, 16, 64)
		require.NoError(t, err)
		got = strconv.AppendUint(got, uint64(i), 10)
		got = append(got, ' ')
		got = AppendLinuxCNC(got, types[0], w)
		got = append(got, '\n')
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(gl), len(wl)) {
		require.Equal(t, wl[i], gl[i], "line %d", i+1)
	}
	require.Equal(t, len(wl), len(gl))
}

// ParseStreamLine reads every line of testdata/linuxcnc/parse-CFG.input
// as LinuxCNC's halstreamer, compiled from its streamer_usr.c with gcc
// (gen.sh), read it: the same message for the same field, or the same
// words bit for bit. Lines are cut as fgets into 4000 bytes cuts them.
func TestParseStreamLineGolden(t *testing.T) {
	t.Parallel()
	inputs, err := filepath.Glob("testdata/linuxcnc/parse-*.input")
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, name := range inputs {
		cfg := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(name), "parse-"), ".input")
		t.Run(cfg, func(t *testing.T) {
			types, err := ParseCfg(cfg)
			require.NoError(t, err)
			in, err := os.ReadFile(name)
			require.NoError(t, err)
			want, err := os.ReadFile(strings.TrimSuffix(name, ".input") + ".golden")
			require.NoError(t, err)
			var got bytes.Buffer
			r := bufio.NewReader(bytes.NewReader(in))
			vals := make([]uint64, len(types))
			for line := 0; ; line++ {
				buf := cfgets(r)
				if len(buf) == 0 {
					break
				}
				if buf[0] == '#' {
					continue
				}
				clear(vals)
				if field, msg := ParseStreamLine(types, buf, vals); msg != "" {
					fmt.Fprintf(&got, "line %d, field %d: %s, skipping the line\n", line, field, msg)
					continue
				}
				fmt.Fprintf(&got, "line %d:", line)
				for _, v := range vals {
					fmt.Fprintf(&got, " %016x", v)
				}
				got.WriteByte('\n')
			}
			gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
			for i := range min(len(gl), len(wl)) {
				require.Equal(t, wl[i], gl[i], "golden line %d", i+1)
			}
			require.Equal(t, len(wl), len(gl))
		})
	}
}

// cfgets is C's fgets into a 4000-byte buffer.
func cfgets(r *bufio.Reader) []byte {
	var b []byte
	for len(b) < LineMax {
		c, err := r.ReadByte()
		if err != nil {
			break
		}
		b = append(b, c)
		if c == '\n' {
			break
		}
	}
	return b
}

// ParseStreamLine never panics or reads past its line, and what it
// accepts is one word per pin.
func FuzzParseStreamLine(f *testing.F) {
	for _, s := range []string{"1 0 -3 4 5 6\n", "nan(0x12) 1\n", "0x1.8p3 0", "-inf 1 99999999999999999999 -1\n", "\x00", ""} {
		f.Add(s)
	}
	types, _ := ParseCfg("fbsulk")
	f.Fuzz(func(t *testing.T, s string) {
		vals := make([]uint64, len(types))
		field, msg := ParseStreamLine(types, []byte(s), vals)
		if msg == "" && field != len(types) {
			t.Fatalf("%q: accepted with field %d", s, field)
		}
		if msg != "" && (field < 0 || field >= len(types)) {
			t.Fatalf("%q: field %d", s, field)
		}
		if msg == "" && vals[1] > 1 {
			t.Fatalf("%q: bit %d", s, vals[1])
		}
	})
}
