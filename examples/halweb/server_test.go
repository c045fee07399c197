package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps"
	"github.com/gortapi/gortapi/rtapi/hal/halctl"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/shm"
	"github.com/gortapi/gortapi/rtapi/sim"
)

func TestMain(m *testing.M) { os.Exit(rttest.Main(m)) }

// markupPin is a valid pin name that is HTML: it must reach no page as
// markup.
const markupPin = "evil.<img/src=x/onerror=window.pwned=1>"

// simHost is a HAL on the sim flavor whose threads run only when the test
// says, with its data and stats segments and control socket in dir.
type simHost struct {
	rt    *rtapi.RT
	h     *hal.HAL
	clock *sim.Controller
	th    *hal.Thread
	dir   string
}

const simHAL = `
loadrt threads name1=servo period1=1000000
loadrt siggen
setp siggen.0.frequency 50
addf siggen.0.update servo
start
`

func newSimHost(t *testing.T) *simHost {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close() })
	dir, err := os.MkdirTemp("", "halweb-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	h, err := hal.New(rt, hal.Options{ShmDir: dir, DataKey: halctl.DefaultDataKey, StatsKey: halctl.DefaultStatsKey})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	c, err := h.NewComponent("evil")
	require.NoError(t, err)
	c.Float(markupPin, hal.Out)
	require.NoError(t, c.Ready())
	cmds, err := halfile.Parse("sim.hal", strings.NewReader(simHAL))
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	srv, err := halctl.Serve(h, halctl.SocketPath(dir, rt.Instance()), halctl.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	clock, err := sim.New(rt)
	require.NoError(t, err)
	th, ok := h.Thread("servo")
	require.True(t, ok)
	return &simHost{rt: rt, h: h, clock: clock, th: th, dir: dir}
}

// logBuffer is a goroutine-safe log.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// serve starts halweb's server on host, as halweb's run does, over
// httptest.
func serve(t *testing.T, host *simHost, mod func(*Options)) (*Server, *httptest.Server, *logBuffer) {
	t.Helper()
	view, err := hal.OpenView(hal.ViewOptions{DataKey: halctl.DefaultDataKey, StatsKey: halctl.DefaultStatsKey,
		Instance: host.rt.Instance(), Dir: host.dir})
	require.NoError(t, err)
	t.Cleanup(func() { view.Close() })
	ctl, err := halctl.DialInstance(host.dir, host.rt.Instance(), halctl.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { ctl.Close() })
	so := shm.Options{Dir: host.dir, Instance: host.rt.Instance()}
	logs := &logBuffer{}
	o := Options{View: view, Control: ctl, Token: testToken, SamplerCh: -1, Poll: time.Millisecond,
		Attach: func(ch int) (SampleSource, error) { return sampler.Attach(so, ch) },
		Log:    log.New(logs, "", 0)}
	if mod != nil {
		mod(&o)
	}
	s, err := NewServer(o)
	require.NoError(t, err)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts, logs
}

// call makes a request with the token (unless token is ""), a JSON body
// for POST, and returns the status and body.
func call(t *testing.T, ts *httptest.Server, method, path, token string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := ts.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// captureCSV runs host's base thread until the scope of s has a
// capture and returns its CSV export, read back.
func captureCSV(t *testing.T, host *simHost, s *Server, ts *httptest.Server) [][]string {
	t.Helper()
	rttest.WaitFor(t, "a capture", func() bool {
		require.NoError(t, host.clock.RunCycles(host.th.Task(), 20))
		c, _, _ := s.scope.lastCapture()
		return c != nil
	})
	code, body := call(t, ts, "GET", "/api/capture.csv", testToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	records, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	require.NoError(t, err)
	return records
}

// The tree lists the host's components, pins, signals and threads; a
// name with markup travels as escaped JSON text.
func TestTreeListsTheHost(t *testing.T) {
	host := newSimHost(t)
	_, ts, _ := serve(t, host, nil)
	code, body := call(t, ts, "GET", "/api/tree", testToken, nil)
	require.Equal(t, http.StatusOK, code, body)
	assert.NotContains(t, body, "<img", "markup escaped in JSON")
	var tree Tree
	require.NoError(t, json.Unmarshal([]byte(body), &tree))
	var pins []string
	for _, p := range tree.Pins {
		pins = append(pins, p.Name)
	}
	assert.Contains(t, pins, "siggen.0.square")
	assert.Contains(t, pins, markupPin)
	require.Len(t, tree.Threads, 1)
	assert.Equal(t, "servo", tree.Threads[0].Name)
	assert.EqualValues(t, 1_000_000, tree.Threads[0].PeriodNs)
	assert.False(t, tree.AllowSet)
}

// Every API answer needs the token: none, a wrong one or one of another
// length is 401; ?token= with the right one sets a SameSite cookie that
// then works alone.
func TestTokenRequired(t *testing.T) {
	host := newSimHost(t)
	_, ts, logs := serve(t, host, nil)
	for _, tok := range []string{"", "wrong", strings.Repeat("0", len(testToken)), testToken + "0"} {
		for _, p := range []string{"/api/tree", "/api/scope", "/api/capture.csv", "/ws"} {
			code, _ := call(t, ts, "GET", p, tok, nil)
			assert.Equal(t, http.StatusUnauthorized, code, "%s with %q", p, tok)
		}
	}
	code, body := call(t, ts, "GET", "/", "", nil)
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Contains(t, body, `name="token"`, "the login page")

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(ts.URL + "/?token=bad")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, logs.String(), "bad token from 127.0.0.1")
	resp, err = noRedirect.Get(ts.URL + "/?token=" + testToken)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	assert.True(t, cookies[0].HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, cookies[0].SameSite)
	req, _ := http.NewRequest("GET", ts.URL+"/api/tree", nil)
	req.AddCookie(cookies[0])
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
		resp.Header.Get("Content-Security-Policy"))
}

// setp and sets need -allow-set, go through the control socket (the
// host's rules apply: an OUT pin is refused) and are logged with the
// client's address; a value that is not one word, or a name the host
// lacks, is refused before the host.
func TestSetGoesThroughTheSocket(t *testing.T) {
	host := newSimHost(t)
	_, ro, _ := serve(t, host, nil)
	code, _ := call(t, ro, "POST", "/api/set", testToken, SetRequest{"setp", "siggen.0.amplitude", "2"})
	assert.Equal(t, http.StatusForbidden, code, "read-only without -allow-set")

	_, ts, logs := serve(t, host, func(o *Options) { o.AllowSet = true })
	code, body := call(t, ts, "POST", "/api/set", testToken, SetRequest{"setp", "siggen.0.amplitude", "2.5"})
	require.Equal(t, http.StatusOK, code, body)
	v, err := host.h.GetP("siggen.0.amplitude")
	require.NoError(t, err)
	assert.Equal(t, "2.5", v)
	assert.Contains(t, logs.String(), "setp siggen.0.amplitude 2.5 from 127.0.0.1")

	code, body = call(t, ts, "POST", "/api/set", testToken, SetRequest{"setp", "siggen.0.square", "1"})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, "OUT pin", "the host's own rule")
	for _, bad := range []SetRequest{
		{"setp", "siggen.0.amplitude", "1\nsetp siggen.0.offset 9"},
		{"setp", "siggen.0.amplitude", "1 2"},
		{"setp", "siggen.0.amplitude", ""},
		{"setp", "siggen.0.amplitude", strings.Repeat("1", MaxValueLen+1)},
		{"setp", "no.such.pin", "1"},
		{"sets", "siggen.0.amplitude", "1"},
		{"loadrt", "siggen", "x"},
	} {
		code, _ := call(t, ts, "POST", "/api/set", testToken, bad)
		assert.Equal(t, http.StatusBadRequest, code, "%+v", bad)
	}
	v, _ = host.h.GetP("siggen.0.offset")
	assert.Equal(t, "0", v, "nothing injected")
}

// A state-changing request must be same-origin JSON of at most MaxBody
// bytes.
func TestPostRefusals(t *testing.T) {
	host := newSimHost(t)
	_, ts, _ := serve(t, host, func(o *Options) { o.AllowSet = true })
	post := func(ct, origin string, body []byte) int {
		req, _ := http.NewRequest("POST", ts.URL+"/api/set", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", ct)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := ts.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	ok := []byte(`{"verb":"setp","name":"siggen.0.amplitude","value":"3"}`)
	assert.Equal(t, http.StatusOK, post("application/json", ts.URL, ok))
	assert.Equal(t, http.StatusForbidden, post("application/json", "http://evil.example", ok))
	assert.Equal(t, http.StatusForbidden, post("application/json", "null", ok))
	assert.Equal(t, http.StatusUnsupportedMediaType, post("text/plain", "", ok))
	huge := []byte(`{"verb":"setp","name":"` + strings.Repeat("a", 2*MaxBody) + `","value":"1"}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, post("application/json", "", huge))
	assert.Equal(t, http.StatusBadRequest, post("application/json", "", []byte(`{"verb":"setp","extra":1}`)))
}

func dialWS(ctx context.Context, ts *httptest.Server, origin string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{"Authorization": {"Bearer " + testToken}}
	if origin != "" {
		h.Set("Origin", origin)
	}
	return websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", &websocket.DialOptions{HTTPHeader: h})
}

// readUntil reads messages until one of type typ.
func readUntil(t *testing.T, ctx context.Context, c *websocket.Conn, typ string) map[string]any {
	t.Helper()
	for {
		kind, b, err := c.Read(ctx)
		require.NoError(t, err)
		if kind == websocket.MessageBinary {
			continue // a capture's rows
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		if m["type"] == typ {
			return m
		}
	}
}

// The WebSocket refuses another origin, sends watch values, and drops a
// client that sends a message over MaxBody, floods, or sends garbage;
// past MaxClients the next is refused with 503.
func TestWebSocketMisuse(t *testing.T) {
	host := newSimHost(t)
	_, ts, logs := serve(t, host, func(o *Options) { o.MaxClients = 3 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	_, resp, err := dialWS(ctx, ts, "http://evil.example")
	require.Error(t, err)
	require.NotNil(t, resp)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	c, _, err := dialWS(ctx, ts, ts.URL)
	require.NoError(t, err)
	defer c.CloseNow()
	readUntil(t, ctx, c, "hello")
	require.NoError(t, c.Write(ctx, websocket.MessageText, []byte(`{"type":"watch","names":["siggen.0.amplitude","`+markupPin+`"]}`)))
	m := readUntil(t, ctx, c, "watch")
	vals := m["values"].([]any)
	require.Len(t, vals, 2)
	assert.Equal(t, "1", vals[0].(map[string]any)["value"])
	assert.Equal(t, markupPin, vals[1].(map[string]any)["name"])

	for name, msg := range map[string][]byte{
		"huge":    bytes.Repeat([]byte("x"), MaxBody+1),
		"garbage": []byte("<script>"),
		"long":    []byte(`{"type":"watch","names":["` + strings.Repeat("a", 100) + `"]}`),
		"many":    []byte(`{"type":"watch","names":[` + strings.Repeat(`"a",`, MaxWatch) + `"a"]}`),
	} {
		bad, _, err := dialWS(ctx, ts, "")
		require.NoError(t, err, name)
		bad.Write(ctx, websocket.MessageText, msg)
		for err == nil {
			_, _, err = bad.Read(ctx)
		}
		assert.NotEqual(t, websocket.StatusNormalClosure, websocket.CloseStatus(err), name)
		bad.CloseNow()
	}
	flood, _, err := dialWS(ctx, ts, "")
	require.NoError(t, err)
	for range 100_000 { // until the server drops it
		if flood.Write(ctx, websocket.MessageText, []byte(`{"type":"watch","names":[]}`)) != nil {
			break
		}
	}
	for err == nil {
		_, _, err = flood.Read(ctx)
	}
	flood.CloseNow()
	assert.Contains(t, logs.String(), "over 50 messages a second")

	// MaxClients: c and two more; the fourth is refused
	var held []*websocket.Conn
	for len(held) < 2 {
		rttest.WaitFor(t, "a free slot", func() bool {
			x, _, err := dialWS(ctx, ts, "")
			if err != nil {
				return false
			}
			held = append(held, x)
			return true
		})
	}
	defer func() {
		for _, x := range held {
			x.CloseNow()
		}
	}()
	_, resp, err = dialWS(ctx, ts, "")
	require.Error(t, err)
	require.NotNil(t, resp, "%v", err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

// A client whose queue is full is dropped by the next message; a capture
// it has no room for is skipped, not queued in part.
func TestSlowClientDropped(t *testing.T) {
	t.Parallel()
	h := newHub(4, log.New(io.Discard, "", 0))
	slow := h.join("slow")
	fast := h.join("fast")
	for range sendQueue - 2 {
		h.queue(slow, []byte("x"))
	}
	h.broadcastCapture([][]byte{[]byte("a"), []byte("b"), []byte("c")})
	assert.Len(t, slow.send, sendQueue-2, "no room for the capture: skipped whole")
	assert.Len(t, fast.send, 3)
	h.broadcast([]byte("y"))
	h.broadcast([]byte("z"))
	h.broadcast([]byte("w"))
	select {
	case <-slow.gone:
		assert.Equal(t, "too slow", slow.why)
	default:
		t.Fatal("the slow client was kept")
	}
	select {
	case <-fast.gone:
		t.Fatal("the fast client was dropped")
	default:
	}
}

// scopeConfig traces the square on the servo thread, rising through 0.
var scopeConfig = ScopeConfig{Thread: "servo", Pins: []string{"siggen.0.square", "siggen.0.clock"},
	Trigger: 0, Edge: "rising", Level: 0, Mode: "normal", Samples: 60, Position: 0.25}

// The scope loads halweb's sampler over the control socket, links the
// pins, triggers on the rising edge at the level, exports the window as
// halscope's CSV, and at Close removes its function and links.
func TestScopeCapturesAndCleansUp(t *testing.T) {
	host := newSimHost(t)
	s, ts, logs := serve(t, host, nil)
	code, body := call(t, ts, "POST", "/api/scope", testToken, scopeConfig)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, 1, loads(logs, "cfg=fb depth=16384"), "a sampler of the traces' types, in trace order")
	assert.Equal(t, []hal.Type{hal.TypeFloat, hal.TypeBit}, samplerPins(t, host), "one pin per trace")
	out := &bytes.Buffer{}
	require.NoError(t, host.h.Exec(out, halfile.Command{Verb: "show", Args: []string{"pin", "sampler.0.pin.0"}}))
	assert.Contains(t, out.String(), "halweb-0", "the unlinked OUT pin got halweb's signal")

	// applied again (a new trigger, say), once the view shows the pin on
	// halweb's signal: the earlier wiring goes first
	rttest.WaitFor(t, "the view to show halweb's link", func() bool {
		snap := s.Snapshot()
		p, _ := findPin(&snap, "siggen.0.square")
		return p.Signal == "halweb-0"
	})
	code, body = call(t, ts, "POST", "/api/scope", testToken, scopeConfig)
	require.Equal(t, http.StatusOK, code, body)

	records := captureCSV(t, host, s, ts)
	require.Len(t, records, 61)
	assert.Equal(t, []string{"cycle", "time_s", "siggen.0.square", "siggen.0.clock"}, records[0])
	rows := records[1:]
	fired := 15 // position 0.25 of 60
	assert.Equal(t, "0", rows[fired][1], "the trigger at time 0")
	before, _ := strconv.ParseFloat(rows[fired-1][2], 64)
	at, _ := strconv.ParseFloat(rows[fired][2], 64)
	assert.Less(t, before, 0.0)
	assert.GreaterOrEqual(t, at, 0.0)
	for i := 1; i < len(rows); i++ {
		a, _ := strconv.ParseUint(rows[i-1][0], 10, 64)
		b, _ := strconv.ParseUint(rows[i][0], 10, 64)
		assert.Equal(t, a+1, b, "consecutive cycles")
	}
	code, body = call(t, ts, "GET", "/api/capture.svg", testToken, nil)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "<polyline")

	require.NoError(t, s.Close())
	snap, err := host.h.View().Read()
	require.NoError(t, err)
	assert.Empty(t, samplerThread(&snap, "sampler.0"), "sampler.0 removed from the thread")
	for _, g := range snap.Signals {
		assert.False(t, strings.HasPrefix(g.Name, signalPrefix), "signal %s left", g.Name)
	}
	p, _ := findPin(&snap, "siggen.0.square")
	assert.Empty(t, p.Signal, "the traced pin unlinked again")
	assertNoSampler(t, host)

	// a second halweb loads it again, and unloads it at its end
	require.NoError(t, host.clock.RunCycles(host.th.Task(), 2))
	s2, ts2, logs2 := serve(t, host, nil)
	code, body = call(t, ts2, "POST", "/api/scope", testToken, scopeConfig)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, 1, loads(logs2, "cfg=fb "))
	require.NoError(t, s2.Close())
	assert.Contains(t, logs2.String(), "unloaded sampler")
	assertNoSampler(t, host)
}

// assertNoSampler checks that halweb's sampler left the host at its end
// (issue #40: there was no unloadrt, and it stayed): no component, pin
// or function of it.
func assertNoSampler(t *testing.T, host *simHost) {
	t.Helper()
	snap, err := host.h.View().Read()
	require.NoError(t, err)
	for _, c := range snap.Comps {
		assert.NotEqual(t, "sampler", c.Name, "halweb's sampler left loaded")
	}
	for _, p := range snap.Pins {
		assert.False(t, strings.HasPrefix(p.Name, "sampler."), "pin %s left", p.Name)
	}
	_, ok := host.h.Funct("sampler.0")
	assert.False(t, ok, "function sampler.0 left")
}

// A configuration halweb cannot wire is refused with the reason, and the
// host's own sampler in a thread is never taken over.
func TestPlanWiring(t *testing.T) {
	t.Parallel()
	snap := &hal.Snapshot{
		Threads: []hal.ThreadStats{{Name: "servo"}},
		Pins: []hal.PinInfo{
			{Name: "a.out", Type: hal.TypeFloat, Dir: hal.Out},
			{Name: "a.in", Type: hal.TypeFloat, Dir: hal.In},
			{Name: "a.linked", Type: hal.TypeBit, Dir: hal.In, Signal: "sig"},
			{Name: "a.s", Type: hal.TypeS32, Dir: hal.Out, Signal: "halweb-3"},
		},
		Params:  []hal.ParamInfo{{Name: "a.gain", Type: hal.TypeFloat}},
		Signals: []hal.SignalInfo{{Name: "sig", Type: hal.TypeBit}, {Name: "fsig", Type: hal.TypeFloat}},
	}
	cfg := ScopeConfig{Thread: "servo", Pins: []string{"a.out", "a.linked", "fsig", "a.s"}, Edge: "rising", Mode: "auto", Samples: 100}
	p, err := planWiring(cfg, snap, "")
	require.NoError(t, err)
	assert.Equal(t, "fbfs", p.cfg, "one pin per trace, in trace order")
	assert.Equal(t, []channel{{"a.out", hal.TypeFloat, 0}, {"a.linked", hal.TypeBit, 1}, {"fsig", hal.TypeFloat, 2}, {"a.s", hal.TypeS32, 3}}, p.chans)
	assert.Equal(t, []link{{0, "halweb-0", "a.out"}, {1, "sig", ""}, {2, "fsig", ""}, {3, "halweb-3", "a.s"}}, p.links)

	// a loaded sampler of the same types, in another order, is relinked
	p, err = planWiring(cfg, snap, "sffb")
	require.NoError(t, err)
	assert.Equal(t, "sffb", p.cfg, "kept: no reload")
	assert.Equal(t, []channel{{"a.out", hal.TypeFloat, 1}, {"a.linked", hal.TypeBit, 3}, {"fsig", hal.TypeFloat, 2}, {"a.s", hal.TypeS32, 0}}, p.chans)
	assert.Equal(t, []link{{1, "halweb-1", "a.out"}, {3, "sig", ""}, {2, "fsig", ""}, {0, "halweb-0", "a.s"}}, p.links)
	// one of other types, or of another count, is not
	for _, loaded := range []string{"fffs", "fbf", "fbfsf", "fbfu"} {
		p, err = planWiring(cfg, snap, loaded)
		require.NoError(t, err)
		assert.Equal(t, "fbfs", p.cfg, "loaded %s", loaded)
		assert.Equal(t, 3, p.chans[3].Pin, "loaded %s", loaded)
	}
	for _, bad := range []func(c *ScopeConfig){
		func(c *ScopeConfig) { c.Pins = []string{"a.in"} },
		func(c *ScopeConfig) { c.Pins = []string{"a.gain"} },
		func(c *ScopeConfig) { c.Pins = []string{"nope"} },
		func(c *ScopeConfig) { c.Pins = nil },
		func(c *ScopeConfig) {
			c.Pins = strings.Split("a.out,a.out,a.out,a.out,a.out,a.out,a.out,a.out,a.out", ",")
		},
		func(c *ScopeConfig) { c.Thread = "base" },
		func(c *ScopeConfig) { c.Edge = "auto" },
		func(c *ScopeConfig) { c.Mode = "roll" },
		func(c *ScopeConfig) { c.Samples = MaxSamples + 1 },
		func(c *ScopeConfig) { c.Position = 1.5 },
		func(c *ScopeConfig) { c.Trigger = 4 },
	} {
		c := cfg
		bad(&c)
		_, err := planWiring(c, snap, "")
		assert.ErrorIs(t, err, rtapi.ErrInvalid, "%+v", c)
	}

	// the host's own sampler, in a thread: refused, naming -sampler
	own := &hal.Snapshot{Comps: []hal.CompInfo{{Name: "sampler"}},
		Threads: []hal.ThreadStats{{Name: "servo", Functs: []hal.FunctStats{{Name: "sampler.0"}}}}}
	_, _, err = checkSampler(own)
	assert.ErrorIs(t, err, rtapi.ErrBusy)
	assert.Contains(t, err.Error(), "-sampler 0")
	idle, _, err := checkSampler(&hal.Snapshot{})
	require.NoError(t, err)
	assert.Empty(t, idle, "no sampler: load one")

	// a killed halweb's idle sampler is taken over, its links to
	// halweb's signals to be removed
	comps := []hal.CompInfo{{Name: "sampler"}}
	dead := &hal.Snapshot{Comps: comps, Threads: []hal.ThreadStats{{Name: "servo"}}, Pins: []hal.PinInfo{
		{Name: "sampler.0.pin.1", Type: hal.TypeBit, Signal: "halweb-1"},
		{Name: "sampler.0.pin.0", Type: hal.TypeFloat},
		{Name: "sampler.0.pin.2", Type: hal.TypeS64, Signal: "halweb-2"},
		{Name: "sampler.0.full", Type: hal.TypeBit, Dir: hal.Out, Signal: "x"},
	}}
	idle, stale, err := checkSampler(dead)
	require.NoError(t, err)
	assert.Equal(t, "fbl", idle)
	assert.Equal(t, []string{"sampler.0.pin.1", "sampler.0.pin.2"}, stale)

	// any other is the host's: refused
	pins := func(n int) []hal.PinInfo {
		var out []hal.PinInfo
		for k := range n {
			out = append(out, hal.PinInfo{Name: samplerPinName(k), Type: hal.TypeFloat})
		}
		return out
	}
	for name, ps := range map[string][]hal.PinInfo{
		"a sampler of 48 pins":     pins(48),
		"a sampler of 9 pins":      pins(9),
		"a sampler of 0 pins":      nil,
		"linked to signal sig":     {{Name: "sampler.0.pin.0", Type: hal.TypeFloat, Signal: "sig"}},
		"pin sampler.1.pin.0":      append(pins(1), hal.PinInfo{Name: "sampler.1.pin.0", Type: hal.TypeFloat}),
		"sampler.0.pin.1 expected": {{Name: "sampler.0.pin.0", Type: hal.TypeFloat}, {Name: "sampler.0.pin.2", Type: hal.TypeFloat}},
	} {
		_, _, err := checkSampler(&hal.Snapshot{Comps: comps, Pins: ps})
		require.ErrorIs(t, err, rtapi.ErrBusy, name)
		assert.Contains(t, err.Error(), name)
	}
}

// -http on another address than a loopback one needs -remote.
func TestCheckConfig(t *testing.T) {
	t.Parallel()
	good := config{addr: "127.0.0.1:0", rate: 20, samplerCh: -1, depth: DefaultDepth, maxClients: 8}
	require.NoError(t, checkConfig(good))
	for _, addr := range []string{"[::1]:80", "localhost:1"} {
		c := good
		c.addr = addr
		assert.NoError(t, checkConfig(c), addr)
	}
	for _, addr := range []string{":7681", "0.0.0.0:7681", "192.168.1.5:80"} {
		c := good
		c.addr = addr
		assert.Error(t, checkConfig(c), addr)
		c.remote = true
		assert.NoError(t, checkConfig(c), addr)
	}
	for _, mod := range []func(c *config){
		func(c *config) { c.rate = 5 }, func(c *config) { c.rate = 31 }, func(c *config) { c.samplerCh = 16 },
		func(c *config) { c.depth = 1 }, func(c *config) { c.maxClients = 0 }, func(c *config) { c.addr = "nope" },
	} {
		c := good
		mod(&c)
		assert.Error(t, checkConfig(c), "%+v", c)
	}
}

// The token file is mode 0640, holds the token, and replaces a symlink
// planted at its name instead of writing through it.
func TestWriteToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	path := filepath.Join(dir, "halweb-0.token")
	require.NoError(t, os.Symlink(victim, path))
	tok, err := NewToken()
	require.NoError(t, err)
	assert.Len(t, tok, 64)
	require.NoError(t, WriteToken(path, tok, ""))
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode())
	b, _ := os.ReadFile(path)
	assert.Equal(t, tok+"\n", string(b))
	b, _ = os.ReadFile(victim)
	assert.Equal(t, "keep", string(b))
	assert.Error(t, WriteToken(path, tok, "no-such-group-halweb"))
	assert.True(t, tokenEqual(tok, tok))
	assert.False(t, tokenEqual("", ""))
	assert.False(t, tokenEqual(tok[:63], tok))
}

// halweb reads its command line as every example does (HACKING.md,
// "Examples: one command-line style"): -help exits 0, bad usage 2 (a
// network address without -remote among them, before anything is
// opened), no host 1.
func TestCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-help"}, 0, "usage: halweb"},
		{[]string{"-no-such-flag"}, 2, "usage: halweb"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
		{[]string{"-shm-dir", dir, "-http", "0.0.0.0:7681"}, 2, "add -remote"},
		{[]string{"-shm-dir", dir, "-rate", "100"}, 2, "-rate 100"},
		{[]string{"-shm-dir", dir, "-rtapi.instance", "9"}, 1, "no HAL host of instance 9"},
	} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, tc.code, command(tc.args, &stdout, &stderr), "%q", tc.args)
		assert.Contains(t, stderr.String(), tc.want, "%q", tc.args)
		if tc.code == 1 {
			assert.Contains(t, stderr.String(), "halweb: ")
		}
	}
}

// halweb takes the group as every rtapi program does: -rtapi.shm-group,
// else $RTAPI_SHM_GROUP. It used to ignore the variable, and so read a
// token file and dialled the socket trusting no group.
func TestGroupFromTheEnvironment(t *testing.T) {
	t.Setenv("RTAPI_SHM_GROUP", "gortapi-no-such-group")
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, command([]string{"-shm-dir", t.TempDir(), "-rtapi.instance", "9"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "gortapi-no-such-group")
}

// auto captures without a trigger after a window's worth of samples;
// single captures once and stops; run and stop switch capturing.
func TestScopeModes(t *testing.T) {
	host := newSimHost(t)
	s, ts, _ := serve(t, host, nil)
	status := func() scopeStatus { return s.scope.status() }
	cycles := func() { require.NoError(t, host.clock.RunCycles(host.th.Task(), 20)) }

	cfg := scopeConfig
	cfg.Level, cfg.Mode = 5, "auto" // the square is ±1: never
	code, body := call(t, ts, "POST", "/api/scope", testToken, cfg)
	require.Equal(t, http.StatusOK, code, body)
	rttest.WaitFor(t, "an auto capture", func() bool { cycles(); return status().Seq > 0 })
	c, _, _ := s.scope.lastCapture()
	assert.Equal(t, cfg.pre(), c.Fired, "forced once the pre-trigger samples were in")
	assert.True(t, status().Running, "auto keeps capturing")

	cfg.Level, cfg.Mode = 0, "single"
	code, body = call(t, ts, "POST", "/api/scope", testToken, cfg)
	require.Equal(t, http.StatusOK, code, body)
	seq := status().Seq
	rttest.WaitFor(t, "a single capture", func() bool { cycles(); return status().Seq > seq })
	rttest.WaitFor(t, "single to stop", func() bool { return !status().Running })
	assert.Equal(t, "stopped", status().State)
	seq = status().Seq
	for range 10 {
		cycles()
	}
	assert.Equal(t, seq, status().Seq, "no capture once stopped")

	code, body = call(t, ts, "POST", "/api/scope/run", testToken, struct{}{})
	require.Equal(t, http.StatusOK, code, body)
	assert.True(t, status().Running)
	code, body = call(t, ts, "POST", "/api/scope/stop", testToken, struct{}{})
	require.Equal(t, http.StatusOK, code, body)
	assert.False(t, status().Running)
}

// limitListener serves at most n connections at once: the next Accept
// waits for one to close; Close ends a waiting Accept with net.ErrClosed
// (else a server at its limit could never shut down).
func TestLimitListener(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := limitListener(inner, 2)
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		require.NoError(t, err)
		clients = append(clients, c)
		defer c.Close()
	}
	a, err := ln.Accept()
	require.NoError(t, err)
	b, err := ln.Accept()
	require.NoError(t, err)
	third := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		third <- err
	}()
	select {
	case <-third:
		t.Fatal("a third connection was accepted while two were open")
	case <-time.After(50 * time.Millisecond):
	}
	a.Close()
	require.NoError(t, <-third, "accepted once one closed")
	b.Close()
	b.Close() // a second Close frees no second slot

	full := limitListener(inner, 1)
	d, err := net.Dial("tcp", inner.Addr().String())
	require.NoError(t, err)
	defer d.Close()
	held, err := full.Accept()
	require.NoError(t, err)
	defer held.Close()
	waiting := make(chan error, 1)
	go func() { _, err := full.Accept(); waiting <- err }()
	require.NoError(t, full.Close())
	assert.ErrorIs(t, <-waiting, net.ErrClosed)
}

// writesRecorded is a listener whose connections remember their largest
// write.
type writesRecorded struct {
	net.Listener
	mu      sync.Mutex
	largest int
}

func (l *writesRecorded) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recordedConn{Conn: c, l: l}, nil
}

type recordedConn struct {
	net.Conn
	l *writesRecorded
}

func (c *recordedConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	c.l.largest = max(c.l.largest, len(b))
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}

// A long message (a capture's rows) reaches the client whole, written
// in system calls of at most maxWrite bytes. Before, it went in one write
// of its whole length.
func TestLongMessageWrittenInBoundedWrites(t *testing.T) {
	t.Parallel()
	msg := append([]byte(`{"n":"`), bytes.Repeat([]byte("0123456789,"), 30000)...) // 330 kB
	msg = append(msg, `"}`...)
	rows := append([]byte{rowsKind}, msg[1:]...) // not JSON: binary
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer conn.CloseNow()
		if writeMessage(r.Context(), conn, msg) == nil && writeMessage(r.Context(), conn, rows) == nil {
			conn.Read(r.Context()) // until the client closes
		}
	}))
	rec := &writesRecorded{Listener: ts.Listener}
	ts.Listener = rec
	ts.Start()
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	require.NoError(t, err)
	defer conn.CloseNow()
	conn.SetReadLimit(-1)
	typ, got, err := conn.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, websocket.MessageText, typ)
	assert.Equal(t, msg, got, "one message, whole")
	typ, got, err = conn.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, websocket.MessageBinary, typ, "what is not JSON")
	assert.Equal(t, rows, got, "one message, whole")
	conn.Close(websocket.StatusNormalClosure, "")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Greater(t, rec.largest, 0)
	assert.LessOrEqual(t, rec.largest, maxWrite, "the largest write")
}

// countingView counts a Viewer's reads and host checks.
type countingView struct {
	Viewer
	reads, checks atomic.Int64
}

func (v *countingView) Read() (hal.Snapshot, error) { v.reads.Add(1); return v.Viewer.Read() }
func (v *countingView) HostGone() bool              { v.checks.Add(1); return v.Viewer.HostGone() }

// halweb reads the host only while someone looks: no read while no page
// has a watch list, Rate reads a second while one has. Before, it read
// the whole host Rate times a second with no page connected.
func TestViewReadOnlyWhileWatched(t *testing.T) {
	host := newSimHost(t)
	var cv *countingView
	_, ts, _ := serve(t, host, func(o *Options) { cv = &countingView{Viewer: o.View}; o.View = cv; o.Rate = 30 })
	before := cv.reads.Load() // NewServer's
	rttest.WaitFor(t, "two checks of the host (over Rate ticks)", func() bool { return cv.checks.Load() >= 2 })
	assert.Equal(t, before, cv.reads.Load(), "reads with no one watching")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, _, err := dialWS(ctx, ts, ts.URL)
	require.NoError(t, err)
	defer c.CloseNow()
	readUntil(t, ctx, c, "hello")
	require.NoError(t, c.Write(ctx, websocket.MessageText, []byte(`{"type":"watch","names":["siggen.0.amplitude"]}`)))
	readUntil(t, ctx, c, "watch")
	readUntil(t, ctx, c, "watch")
	assert.Greater(t, cv.reads.Load(), before+1, "reads while a page watches")
}
