package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// signalWriter is a goroutine-safe stderr that closes seen at the first
// write containing want.
type signalWriter struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want string
	seen chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.seen != nil && strings.Contains(w.b.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// halscope arms on fresh samples only (issue 36 item 6: it triggered on
// the sample of cycle 48,000 buffered while the thread was at 307,000,
// with no warning). A ring pre-filled with samples holding a rising edge
// is skipped, and says so; the capture fires on the first fresh edge.
func TestRunArmsOnFreshSamplesOnly(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	dir := t.TempDir()
	h, err := hal.New(rt, hal.Options{ShmDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	cmds, err := halfile.Parse("stale.hal", strings.NewReader(`
loadrt threads name1=servo period1=1000000
loadrt sampler cfg=bf depth=100
addf sampler.0 servo
start
`))
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	clock, err := sim.New(rt)
	require.NoError(t, err)
	th, ok := h.Thread("servo")
	require.True(t, ok)
	cycles := func(n int64) { require.NoError(t, clock.RunCycles(th.Task(), n)) }
	pin := func(v string) { require.NoError(t, h.SetP("sampler.0.pin.0", v)) }

	// stale: cycles 0 to 49, rising at 10
	cycles(10)
	pin("1")
	cycles(40)
	pin("0")

	var stdout bytes.Buffer
	stderr := &signalWriter{want: "stale", seen: make(chan struct{})}
	armed := stderr.seen
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), &stdout, stderr, config{trigger: 0, edge: "rising", level: 0.5, pre: 2, count: 5,
			csv: "-", rt: &rtapi.Options{Instance: rt.Instance()}, shmDir: dir})
	}()
	select {
	case <-armed:
	case err := <-done:
		t.Fatalf("halscope ended before arming, on the stale samples (%v):\n%s", err, stdout.String())
	case <-time.After(30 * time.Second):
		t.Fatal("halscope never armed")
	}
	assert.Contains(t, stderr.String(), "skipped 50 stale samples (cycles 0 to 49)")
	// fresh: cycles 50 to 54 low, rising at 55
	cycles(5)
	pin("1")
	cycles(10)
	require.NoError(t, <-done, stderr.String())
	records, err := csv.NewReader(&stdout).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 6, stdout.String())
	var got []string
	for _, r := range records[1:] {
		got = append(got, r[0]+":"+r[2])
	}
	assert.Equal(t, []string{"53:0", "54:0", "55:1", "56:1", "57:1"}, got, "cycle:pin.0, the trigger at 55")
}
