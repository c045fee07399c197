package pins_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/examples/halhost/pins"
	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

func openRT(t *testing.T) *rtapi.RT {
	t.Helper()
	return rttest.Open(t, func() (*rtapi.RT, error) {
		return rtapi.Open(rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off})
	})
}

func key() uint32 { return 0x20000000 + rand.Uint32N(0x0fffffff) }

func TestCreateAttachPublish(t *testing.T) {
	rt := openRT(t)
	k := key()
	host, err := pins.Create(rt, k, []string{"a.out", "b.out"})
	require.NoError(t, err)
	a, err := host.Pin("a.out")
	require.NoError(t, err)
	b, err := host.Pin("b.out")
	require.NoError(t, err)
	_, err = host.Pin("c.out")
	require.ErrorIs(t, err, rtapi.ErrInvalid)

	mon, err := pins.Attach(rt, k)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.out", "b.out"}, mon.Names())
	assert.Equal(t, os.Getpid(), mon.HostPID())
	var f pins.Frame
	seq, err := mon.Read(&f)
	require.NoError(t, err)
	assert.Zero(t, seq, "no frame yet")

	a.Set(1.5)
	b.Set(-2)
	allocs := testing.AllocsPerRun(100, func() {
		a.Set(a.Get() + 1)
		host.Publish(42, 7)
	})
	assert.Zero(t, allocs, "Set, Get and Publish are RT-safe")
	seq, err = mon.Read(&f)
	require.NoError(t, err)
	assert.Equal(t, uint64(101), seq)
	assert.Equal(t, int64(42), f.Time)
	assert.Equal(t, int64(7), f.Cycle)
	assert.Equal(t, 1.5+101, f.Values[0])
	assert.Equal(t, -2.0, f.Values[1])

	_, err = pins.Create(rt, k, []string{"x"})
	require.ErrorIs(t, err, rtapi.ErrInvalid, "the key belongs to a live host (this process)")
	assert.Contains(t, err.Error(), "running process")

	require.NoError(t, host.Delete())
	_, err = mon.Read(&f)
	require.NoError(t, err)
	assert.Equal(t, 102.5, f.Values[0], "a monitor still attached reads the last frame")
	require.NoError(t, mon.Close())
	ok, err := rt.ShmExists(k)
	require.NoError(t, err)
	assert.False(t, ok, "the last detach removed the segment")
}

func TestCreateMisuse(t *testing.T) {
	rt := openRT(t)
	many := make([]string, pins.MaxPins+1)
	for i := range many {
		many[i] = "p" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	for _, tc := range []struct {
		name  string
		names []string
		want  string
	}{
		{"too many", many, "at most"},
		{"empty name", []string{""}, "empty or longer"},
		{"long name", []string{strings.Repeat("n", pins.NameLen)}, "empty or longer"},
		{"duplicate", []string{"a", "a"}, "duplicate pin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := key()
			_, err := pins.Create(rt, k, tc.names)
			require.ErrorIs(t, err, rtapi.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
			ok, err := rt.ShmExists(k)
			require.NoError(t, err)
			assert.False(t, ok, "a refused Create leaves no segment")
		})
	}
}

func TestAttachMisuse(t *testing.T) {
	rt := openRT(t)
	_, err := pins.Attach(rt, key())
	require.True(t, errors.Is(err, os.ErrNotExist), "%v", err)

	k := key()
	other, err := rt.ShmNew(k, 100)
	require.NoError(t, err)
	defer other.Delete()
	_, err = pins.Attach(rt, k)
	require.ErrorIs(t, err, rtapi.ErrInvalid, "a segment of another size")
}

// The pin count in the segment is another process's to change: the host's
// servo thread publishes its own count, and a monitor refuses a count
// outside the table. Before, a count of 1000 written into the segment
// made Publish index past the frame (a panic in the servo thread).
func TestCorruptPinCount(t *testing.T) {
	rt := openRT(t)
	k := key()
	host, err := pins.Create(rt, k, []string{"a.out", "b.out"})
	require.NoError(t, err)
	defer host.Delete()
	raw, err := rt.ShmAttach(k)
	require.NoError(t, err)
	defer raw.Close()
	n, err := shm.View[int64](raw, 8) // block.N, after the magic
	require.NoError(t, err)
	require.Equal(t, int64(2), *n)
	for _, bad := range []int64{1000, pins.MaxPins + 1, -1} {
		*n = bad
		require.NotPanics(t, func() { host.Publish(1, 1) })
		_, err = pins.Attach(rt, k)
		require.ErrorIs(t, err, rtapi.ErrInvalid)
		assert.Contains(t, err.Error(), "pin count")
	}
	*n = 2
	mon, err := pins.Attach(rt, k)
	require.NoError(t, err)
	var f pins.Frame
	seq, err := mon.Read(&f)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), seq)
	require.NoError(t, mon.Close())
}

// An empty file at the pins key (a host that died between creating and
// sizing it, or a stray touch) is replaced as a stale segment. Before,
// Create failed with ErrShmNotInitialised and halhost would not start.
func TestCreateReplacesEmptyStaleFile(t *testing.T) {
	rt := openRT(t)
	k := key()
	path := fmt.Sprintf("/dev/shm/gortapi-%d-%08x", rt.Instance(), k)
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	defer os.Remove(path)
	host, err := pins.Create(rt, k, []string{"a.out"})
	require.NoError(t, err)
	require.NoError(t, host.Delete())
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// A writer that completes a frame during every copy (no scope publishes
// that fast) makes Read give up with ErrTimeout instead of spinning for as
// long as it writes.
func TestReadBoundedUnderRacingWriter(t *testing.T) {
	rt := openRT(t)
	k := key()
	host, err := pins.Create(rt, k, []string{"a.out"})
	require.NoError(t, err)
	defer host.Delete()
	mon, err := pins.Attach(rt, k)
	require.NoError(t, err)
	defer mon.Close()
	host.Publish(1, 1)
	var f pins.Frame
	got, err := mon.Read(&f)
	require.NoError(t, err)
	require.Equal(t, uint64(1), got, "no writer racing: the first copy is good")

	copies := pins.RaceEveryRead(t)
	_, err = mon.Read(&f)
	require.ErrorIs(t, err, rtapi.ErrTimeout)
	require.Equal(t, pins.MaxReadTries, *copies, "Read gives up after a bounded number of copies")
}
