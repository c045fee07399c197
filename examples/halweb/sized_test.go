package main

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// loads counts the log's lines "loaded sampler ..." that contain what.
func loads(logs *logBuffer, what string) int {
	n := 0
	for line := range strings.Lines(logs.String()) {
		if strings.HasPrefix(line, "loaded sampler ") && strings.Contains(line, what) {
			n++
		}
	}
	return n
}

// samplerPins are the types of the host's sampler.0.pin.K, K = 0, 1, …
func samplerPins(t *testing.T, host *simHost) []hal.Type {
	t.Helper()
	snap, err := host.h.View().Read()
	require.NoError(t, err)
	var types []hal.Type
	for k := 0; ; k++ {
		p, ok := findPin(&snap, samplerPinName(k))
		if !ok {
			return types
		}
		types = append(types, p.Type)
	}
}

// halweb's sampler has one pin per trace, of its type, in trace order:
// the host's thread reads and records only what is traced. A new
// configuration of the same types only relinks it; one of other types
// (three floats, then two floats and a bit) unloads it and loads one of
// the new cfg, which captures the new traces. Before, halweb loaded one
// sampler of 48 pins (8 of each type) whatever was traced, and the
// host's thread read all 48 and wrote a 424-byte record each cycle.
func TestScopeSamplerSizedToTraces(t *testing.T) {
	host := newSimHost(t)
	s, ts, logs := serve(t, host, nil)
	F, B := hal.TypeFloat, hal.TypeBit
	apply := func(pins ...string) {
		t.Helper()
		cfg := scopeConfig
		cfg.Pins = pins
		code, body := call(t, ts, "POST", "/api/scope", testToken, cfg)
		require.Equal(t, http.StatusOK, code, body)
	}

	apply("siggen.0.square", "siggen.0.sine", "siggen.0.cosine")
	assert.Equal(t, 1, loads(logs, "cfg=fff "), logs.String())
	assert.Equal(t, []hal.Type{F, F, F}, samplerPins(t, host), "one pin per trace")

	apply("siggen.0.square", "siggen.0.triangle", "siggen.0.sawtooth")
	assert.Equal(t, 1, loads(logs, ""), "other floats: relinked, not reloaded")
	assert.NotContains(t, logs.String(), "unloaded sampler")
	assert.Equal(t, []hal.Type{F, F, F}, samplerPins(t, host))

	apply("siggen.0.square", "siggen.0.sine", "siggen.0.clock")
	assert.Contains(t, logs.String(), "unloaded sampler cfg=fff")
	assert.Equal(t, 1, loads(logs, "cfg=ffb "), logs.String())
	assert.Equal(t, []hal.Type{F, F, B}, samplerPins(t, host), "reloaded for two floats and a bit")
	snap, err := host.h.View().Read()
	require.NoError(t, err)
	assert.Equal(t, "servo", samplerThread(&snap, "sampler.0"), "the new sampler in the thread")

	records := captureCSV(t, host, s, ts) // of the new traces
	require.Len(t, records, scopeConfig.Samples+1)
	assert.Equal(t, []string{"cycle", "time_s", "siggen.0.square", "siggen.0.sine", "siggen.0.clock"}, records[0])
	rows := records[1:]
	fired := scopeConfig.pre()
	before, _ := strconv.ParseFloat(rows[fired-1][2], 64)
	at, _ := strconv.ParseFloat(rows[fired][2], 64)
	assert.Less(t, before, 0.0, "the square rises through 0 at the trigger")
	assert.GreaterOrEqual(t, at, 0.0)
	var sines []float64
	for _, r := range rows {
		square, _ := strconv.ParseFloat(r[2], 64)
		sine, _ := strconv.ParseFloat(r[3], 64)
		assert.Contains(t, []float64{-1, 1}, square, "row %v", r)
		assert.True(t, sine >= -1 && sine <= 1, "row %v", r)
		want := "0"
		if square > 0 {
			want = "1"
		}
		assert.Equal(t, want, r[4], "siggen's clock is its square > 0: row %v", r)
		sines = append(sines, sine)
	}
	assert.Less(t, slices.Min(sines), slices.Max(sines), "the sine moves")

	require.NoError(t, s.Close())
	assert.Contains(t, logs.String(), "unloaded sampler cfg=ffb")
	assertNoSampler(t, host)
}

// refuseLoad makes the host refuse the loadrt of a sampler of cfg (its
// depth becomes 0, which the sampler refuses).
type refuseLoad struct {
	Controller
	cfg string
}

func (c refuseLoad) Do(cmd halfile.Command) (string, error) {
	if cmd.Verb == "loadrt" && slices.Contains(cmd.Args, "cfg="+c.cfg) {
		cmd.Args = []string{"sampler", "cfg=" + c.cfg, "depth=0"}
	}
	return c.Controller.Do(cmd)
}

// A reload the host refuses is the host's error to the page, the scope
// stops with it, and nothing of halweb's is left in the host; the next
// configuration loads a sampler again.
func TestScopeReloadRefused(t *testing.T) {
	host := newSimHost(t)
	s, ts, logs := serve(t, host, func(o *Options) { o.Control = refuseLoad{o.Control, "fb"} })
	cfg := scopeConfig // square and clock: fb
	cfg.Pins = []string{"siggen.0.square"}
	code, body := call(t, ts, "POST", "/api/scope", testToken, cfg)
	require.Equal(t, http.StatusOK, code, body)

	cfg.Pins = scopeConfig.Pins
	code, body = call(t, ts, "POST", "/api/scope", testToken, cfg)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, "load halweb's sampler of cfg=fb")
	assert.Contains(t, body, "depth")
	st := s.scope.status()
	assert.False(t, st.Running)
	assert.Equal(t, "error", st.State)
	assert.Contains(t, st.Error, "cfg=fb")
	assertNoSampler(t, host)
	snap, err := host.h.View().Read()
	require.NoError(t, err)
	for _, g := range snap.Signals {
		assert.False(t, strings.HasPrefix(g.Name, signalPrefix), "signal %s left", g.Name)
	}

	cfg.Pins = []string{"siggen.0.sine", "siggen.0.square"}
	code, body = call(t, ts, "POST", "/api/scope", testToken, cfg)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, 2, loads(logs, "cfg=f"), logs.String())
	assert.Equal(t, []hal.Type{hal.TypeFloat, hal.TypeFloat}, samplerPins(t, host))
	rttest.WaitFor(t, "a capture", func() bool {
		require.NoError(t, host.clock.RunCycles(host.th.Task(), 20))
		return s.scope.status().Seq > 0
	})
	require.NoError(t, s.Close())
	assertNoSampler(t, host)
}

// The idle sampler a killed halweb left (cfg=bf, its pin on halweb's
// signal) is taken over: it has the traces' types (square f, clock b),
// so it is relinked, not loaded again, each trace on the pin of its
// type, and unloaded at the end. Before, a sampler of other than 48 pins
// was refused as the host's.
func TestScopeTakesOverDeadSampler(t *testing.T) {
	host := newSimHost(t)
	cmds, err := halfile.Parse("dead.hal", strings.NewReader("loadrt sampler cfg=bf depth=1024\n"+
		"net halweb-0 siggen.0.clock sampler.0.pin.0\n"))
	require.NoError(t, err)
	require.NoError(t, host.h.Load(io.Discard, cmds))
	s, ts, logs := serve(t, host, nil)
	code, body := call(t, ts, "POST", "/api/scope", testToken, scopeConfig)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, 0, loads(logs, ""), "taken over, not loaded")
	assert.Equal(t, []hal.Type{hal.TypeBit, hal.TypeFloat}, samplerPins(t, host))

	records := captureCSV(t, host, s, ts)
	assert.Equal(t, []string{"cycle", "time_s", "siggen.0.square", "siggen.0.clock"}, records[0])
	for _, r := range records[1:] {
		assert.Contains(t, []string{"-1", "1"}, r[2], "the square from the float pin: row %v", r)
		want := "0"
		if r[2] == "1" {
			want = "1"
		}
		assert.Equal(t, want, r[3], "each trace read from its own pin: row %v", r)
	}
	require.NoError(t, s.Close())
	assert.Contains(t, logs.String(), "unloaded sampler cfg=bf")
	assertNoSampler(t, host)
}
