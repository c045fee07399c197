package promrt_test

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/promrt"
)

// 64 clients connect at once to a listener limited to 2 connections: all
// of them are served in the end, and the server never holds more than 2
// open at a time; the others wait in the kernel's queue.
func TestLimitListenerNeverAboveLimit(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := promrt.LimitListener(raw, 2)
	defer ln.Close()
	var open, peak, accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := open.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			accepted.Add(1)
			go func() {
				var b [1]byte
				_, _ = c.Read(b[:]) // until the client's byte or close
				open.Add(-1)        // before Close gives the slot back
				c.Close()
			}()
		}
	}()
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", raw.Addr().String())
			if !assert.NoError(t, err) {
				return
			}
			_, _ = c.Write([]byte{1})
			_, _ = io.Copy(io.Discard, c) // until the server closes it
			c.Close()
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(64), accepted.Load(), "every client was served")
	assert.LessOrEqual(t, peak.Load(), int64(2), "connections open at once")
	require.NoError(t, ln.Close())
	_, err = ln.Accept()
	require.ErrorIs(t, err, net.ErrClosed)
}

// A client that connects and sends nothing holds the only connection
// slot until ReadHeaderTimeout: the server then drops it and serves the
// scraper queued behind it. With a bare http.Server (no timeout) the
// scraper would wait for ever.
func TestSilentClientLosesItsSlot(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := promrt.NewServer(prometheus.NewRegistry())
	assert.Equal(t, promrt.ReadHeaderTimeout, srv.ReadHeaderTimeout)
	srv.ReadHeaderTimeout, srv.ReadTimeout = 50*time.Millisecond, 50*time.Millisecond // shorter, for the test
	go srv.Serve(promrt.LimitListener(raw, 1))
	defer srv.Close()

	silent, err := net.Dial("tcp", raw.Addr().String())
	require.NoError(t, err)
	defer silent.Close()
	resp, err := http.Get("http://" + raw.Addr().String() + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = io.Copy(io.Discard, silent)
	require.NoError(t, err, "the silent client's connection was closed by the server (EOF)")
}

// NewServer serves /metrics and nothing else.
func TestNewServerServesMetricsOnly(t *testing.T) {
	ln, err := promrt.Listen("127.0.0.1:0")
	require.NoError(t, err)
	srv := promrt.NewServer(prometheus.NewRegistry())
	go srv.Serve(ln)
	defer srv.Close()
	for path, want := range map[string]int{"/metrics": http.StatusOK, "/": http.StatusNotFound} {
		resp, err := http.Get("http://" + ln.Addr().String() + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, path)
	}
}
