package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
