package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// streamed is a capture as the page rebuilds it from the WebSocket.
type streamed struct {
	seq, total int
	cycle, t   []float64
	v          [][]float64
}

// decodeRows adds a binary rows message to c, as app.js's onRows does,
// refusing what onRows refuses.
func decodeRows(c *streamed, b []byte) error {
	if len(b) < rowsHeader {
		return errRefused
	}
	u := func(i int) int { return int(binary.LittleEndian.Uint32(b[4*i:])) }
	if u(0) != rowsKind || u(1) != int(uint32(c.seq)) || u(2) != len(c.cycle) || u(4) != len(c.v) ||
		len(b) != rowsHeader+8*u(3)*(2+u(4)) {
		return errRefused
	}
	n, p := u(3), rowsHeader
	f := func() float64 { p += 8; return math.Float64frombits(binary.LittleEndian.Uint64(b[p-8:])) }
	for range n {
		c.cycle = append(c.cycle, f())
	}
	for range n {
		c.t = append(c.t, f())
	}
	for k := range c.v {
		for range n {
			c.v[k] = append(c.v[k], f())
		}
	}
	return nil
}

var errRefused = errors.New("a rows message the page would refuse")

// readCaptures reads the WebSocket until it has n whole captures.
func readCaptures(t *testing.T, ctx context.Context, c *websocket.Conn, n int) []*streamed {
	t.Helper()
	var (
		out []*streamed
		cur *streamed
	)
	for len(out) < n {
		typ, b, err := c.Read(ctx)
		require.NoError(t, err)
		if typ == websocket.MessageBinary {
			require.NotNil(t, cur, "rows before their capture's header")
			require.NoError(t, decodeRows(cur, b))
			continue
		}
		var m struct {
			Type  string   `json:"type"`
			Seq   int      `json:"seq"`
			Total int      `json:"total"`
			Names []string `json:"names"`
		}
		require.NoError(t, json.Unmarshal(b, &m))
		switch m.Type {
		case "capture":
			cur = &streamed{seq: m.Seq, total: m.Total, v: make([][]float64, len(m.Names))}
		case "end":
			require.NotNil(t, cur)
			require.Equal(t, cur.seq, m.Seq)
			require.Len(t, cur.cycle, cur.total, "every row of capture %d", m.Seq)
			out = append(out, cur)
			cur = nil
		}
	}
	return out
}

// streamScope serves a sim host (Options changed by mod), opens a page's
// WebSocket on it and applies cfg to the scope.
func streamScope(t *testing.T, mod func(*Options), cfg ScopeConfig) (*simHost, *Server, *httptest.Server, context.Context, *websocket.Conn) {
	t.Helper()
	host := newSimHost(t)
	s, ts, _ := serve(t, host, mod)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	conn, _, err := dialWS(ctx, ts, "")
	require.NoError(t, err)
	t.Cleanup(func() { conn.CloseNow() })
	conn.SetReadLimit(-1)
	readUntil(t, ctx, conn, "hello")
	code, body := call(t, ts, "POST", "/api/scope", testToken, cfg)
	require.Equal(t, http.StatusOK, code, body)
	return host, s, ts, ctx, conn
}

// A capture reaches the page as binary rows that hold exactly what the
// CSV export holds: cycles, seconds from the trigger, values. Before,
// the rows went as JSON numbers, whose formatting was most of halweb's
// CPU time while a page watched a fast thread.
func TestCaptureStreamIsTheExport(t *testing.T) {
	cfg := scopeConfig
	cfg.Mode = "single"
	cfg.Samples = batchRows + 100 // two rows messages
	host, s, ts, ctx, conn := streamScope(t, nil, cfg)
	records := captureCSV(t, host, s, ts)[1:]
	got := readCaptures(t, ctx, conn, 1)[0]

	require.Len(t, got.cycle, len(records))
	for i, r := range records {
		require.Equal(t, r[0], strconv.FormatUint(uint64(got.cycle[i]), 10), "row %d cycle", i)
		require.Equal(t, r[1], strconv.FormatFloat(got.t[i], 'g', -1, 64), "row %d time", i)
		for k, typ := range []hal.Type{hal.TypeFloat, hal.TypeBit} {
			v := got.v[k][i]
			w := math.Float64bits(v)
			if typ == hal.TypeBit {
				w = uint64(v)
			}
			require.Equal(t, r[2+k], string(cli.AppendValue(nil, typ, w)), "row %d channel %d", i, k)
		}
	}
}

// Captures follow each other no sooner than 1/Rate in the host's time:
// a second of a simulated host makes as many captures however fast the
// test runs it. Before, the hold-off was wall-clock time, so a host
// thread run faster than real time (the sim flavor, or a burst read
// from the ring) gave fewer captures and gaps of any length.
func TestCaptureHoldOffIsHostTime(t *testing.T) {
	cfg := scopeConfig
	cfg.Mode = "auto"
	host, s, _, ctx, conn := streamScope(t, func(o *Options) { o.Rate = 20 }, cfg)
	rttest.WaitFor(t, "a first capture", func() bool {
		require.NoError(t, host.clock.RunCycles(host.th.Task(), 20))
		return s.scope.status().Seq > 0
	})
	// Then 1.2 s of the 1 ms thread in one go (the ring, 16384, holds
	// it): a capture of 60 rows, 50 ms of hold-off, at most 20 ms (the
	// square's period) to the trigger: at least 9 more.
	require.NoError(t, host.clock.RunCycles(host.th.Task(), 1200))
	caps := readCaptures(t, ctx, conn, 10)
	for i := 1; i < len(caps); i++ {
		prev, next := caps[i-1], caps[i]
		gap := next.cycle[0] - prev.cycle[len(prev.cycle)-1]
		assert.GreaterOrEqual(t, gap, 50.0, "cycles from capture %d to %d", prev.seq, next.seq)
		assert.Less(t, gap, 50.0+20+1, "cycles from capture %d to %d", prev.seq, next.seq)
	}
}
