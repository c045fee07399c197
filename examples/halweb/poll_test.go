package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPollPeriod(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		period      time.Duration
		depth, rate int
		want        time.Duration
	}{
		{25 * time.Microsecond, 16384, 20, 50 * time.Millisecond},    // 51 ms to an eighth: the watch period
		{10 * time.Microsecond, 16384, 20, 20480 * time.Microsecond}, // an eighth of 164 ms
		{time.Microsecond, 16384, 20, minPoll},                       // 2 ms: no shorter than minPoll
		{time.Millisecond, 16384, 30, time.Second / 30},
		{0, 16384, 20, minPoll}, // period unknown
		{25 * time.Microsecond, 0, 20, minPoll},
	} {
		assert.Equal(t, tc.want, pollPeriod(tc.period, tc.depth, tc.rate), "%v %d %d", tc.period, tc.depth, tc.rate)
	}
}
