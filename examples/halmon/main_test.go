package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// The live behaviour (attach, refresh, Ctrl-C, host stopping) is tested
// with real processes in examples/halhost; these are halmon's own misuse
// cases, in process.
// wideKey does not fit a 32-bit key.
var wideKey uint64 = 1 << 33

func TestRunMisuse(t *testing.T) {
	good := config{statsKey: 0x7e571, pinsKey: 0x7e572, interval: time.Millisecond}
	for _, tc := range []struct {
		name string
		edit func(*config)
		want string
	}{
		{"no host", func(*config) {}, "no halhost running"},
		{"no host after waiting", func(c *config) { c.wait = 30 * time.Millisecond }, "no halhost running"},
		{"zero interval", func(c *config) { c.interval = 0 }, "-interval must be positive"},
		{"negative count", func(c *config) { c.count = -1 }, "-count and -wait not negative"},
		{"zero key", func(c *config) { c.statsKey = 0 }, "non-zero 32-bit keys"},
		{"wide key", func(c *config) { c.pinsKey = uint(wideKey) }, "non-zero 32-bit keys"}, // truncated to 0 where uint is 32 bits: refused too
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			var out bytes.Buffer
			err := run(context.Background(), &out, c)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestInterruptedWhileWaitingForHost(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := config{statsKey: 0x7e573, pinsKey: 0x7e574, interval: time.Millisecond, wait: time.Hour}
	require.NoError(t, run(ctx, &bytes.Buffer{}, c), "Ctrl-C while waiting is a clean exit")
}

// A host between creating its segments and writing their headers (zeros
// where the HAL magic goes) is waited for, not reported corrupt. Before,
// halmon exited with "not a HAL data segment of layout 1 (magic 0x0)"
// when it caught a restarting host there (TestKilledHostIsNoticedAndReplaced,
// unprivileged, under load).
func TestWaitsForHeadersNotYetWritten(t *testing.T) {
	const statsKey, pinsKey = 0x7e575, 0x7e576
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off})
	require.NoError(t, err)
	defer rt.Close()
	// A host's segment sizes, then the same segments as a host leaves
	// them before its first header store.
	dir := t.TempDir()
	h, err := hal.New(rt, hal.Options{StatsKey: statsKey, DataKey: pinsKey, ShmDir: dir})
	require.NoError(t, err)
	sizes := map[uint32]int{}
	for _, k := range []uint32{statsKey, pinsKey} {
		seg, err := shm.Attach(shm.Options{Dir: dir, Instance: rt.Instance()}, k)
		require.NoError(t, err)
		sizes[k] = seg.Size()
		require.NoError(t, seg.Close())
	}
	require.NoError(t, h.Close())
	for k, size := range sizes {
		seg, err := shm.Create(shm.Options{Instance: rt.Instance()}, k, size)
		require.NoError(t, err)
		t.Cleanup(func() { seg.Delete() })
	}

	c := config{statsKey: statsKey, pinsKey: pinsKey, interval: time.Millisecond}
	_, err = attachWaiting(context.Background(), rt, c, 0)
	require.ErrorIs(t, err, shm.ErrNotInitialised)
	require.NotErrorIs(t, err, hal.ErrCorrupt)
	_, err = hal.OpenView(hal.ViewOptions{DataKey: pinsKey, Instance: rt.Instance()})
	require.ErrorIs(t, err, shm.ErrNotInitialised)
	_, err = attachWaiting(context.Background(), rt, c, 50*time.Millisecond)
	require.ErrorIs(t, err, shm.ErrNotInitialised, "waited, then gave up as not initialised")
}

// A hostile writer of the data segment may put terminal controls into a
// name; show prints them escaped.
func TestShowEscapesNames(t *testing.T) {
	var b strings.Builder
	d := hal.Snapshot{Pins: []hal.PinInfo{{Name: "a\u009b2Jb", Type: hal.TypeBit, Dir: hal.Out, Signal: "s\x1b[31m"}}}
	show(&b, false, d)
	out := b.String()
	if strings.ContainsAny(out, "\u009b\x1b") {
		t.Fatalf("show printed a raw control: %q", out)
	}
	if !strings.Contains(out, "a") || !strings.Contains(out, "s") {
		t.Fatalf("show lost the names: %q", out)
	}
}
