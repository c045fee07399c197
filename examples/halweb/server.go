package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
)

// Limits of what a client may send or hold.
const (
	// DefaultMaxClients bounds the live page connections (WebSockets);
	// the next is answered 503.
	DefaultMaxClients = 8
	// MaxConns bounds the TCP connections served at once, whatever they
	// send; the next waits in the kernel's queue.
	MaxConns = 64
	// MaxBody bounds a request's body and a WebSocket message.
	MaxBody = 8 << 10
	// MaxWatch bounds a watch list.
	MaxWatch = 64
	// MaxValueLen bounds a setp or sets value.
	MaxValueLen = 64
	// sendQueue is the messages a client may have waiting; a client that
	// lets it fill is dropped, so that it never holds up the others or
	// the sampler's reader.
	sendQueue = 64
	// writeTimeout bounds one message's write to a client.
	writeTimeout = 5 * time.Second
	// maxMessagesPerSecond bounds what a client sends; past it the
	// connection is closed.
	maxMessagesPerSecond = 50
)

// cookieName holds the token in the browser (SameSite=Strict, HttpOnly).
const cookieName = "halweb_token"

// Viewer reads the host, read-only: a *hal.View. It is used by one
// goroutine at a time.
type Viewer interface {
	Read() (hal.Snapshot, error)
	HostGone() bool
}

// Controller runs a halcmd command in the host: a *halctl.Client. It is
// used by one goroutine at a time.
type Controller interface {
	Do(cmd halfile.Command) (string, error)
}

// SampleSource is a sampler channel's ring: a *sampler.Reader.
type SampleSource interface {
	Types() []hal.Type
	Buffered() (int, error)
	TryNext() (sampler.Sample, error)
	Close() error
}

// Options configure a Server. View, Control, Attach and Token are
// required.
type Options struct {
	View    Viewer
	Control Controller
	// Attach opens a sampler channel's ring (sampler.Attach).
	Attach func(channel int) (SampleSource, error)
	// Token is what every request must present (cookie or Bearer).
	Token string
	// AllowSet lets clients setp and sets.
	AllowSet bool
	// Rate is the watch-list and tree updates per second (10 to 30; 0: 20).
	Rate int
	// SamplerCh >= 0 reads the host's sampler channel as it is wired
	// instead of loading halweb's own.
	SamplerCh int
	// Depth is the depth of the sampler halweb loads (0: DefaultDepth).
	Depth int
	// MaxClients bounds the live page connections (0: DefaultMaxClients).
	MaxClients int
	// Log gets every change made and every client dropped (nil: discard).
	Log *log.Logger
	// Poll is the time between two drains of the sampler's ring (0: an
	// eighth of the time halweb's sampler takes to fill, 10 ms to 1/Rate;
	// 10 ms for -sampler's). The reader never sleeps in the ring, so the
	// host's thread never has to wake it.
	Poll time.Duration
}

// Server serves the page, the tree, the watch list and the scope.
type Server struct {
	o      Options
	mux    *http.ServeMux
	viewMu sync.Mutex // serialises View; guards readAt
	readAt time.Time  // when snap was read
	snap   atomic.Pointer[hal.Snapshot]
	gone   atomic.Bool
	ctlMu  sync.Mutex // serialises Control
	scope  *Scope
	hub    *hub
	stop   chan struct{}
	wg     sync.WaitGroup
	closed atomic.Bool

	badMu     sync.Mutex // logBadToken's limit
	badLogged time.Time
	badQuiet  int
}

// logBadToken logs a wrong ?token=, at most once a second (anyone who
// reaches the port can send them): the rest are counted in the next line.
func (s *Server) logBadToken(addr string) {
	s.badMu.Lock()
	defer s.badMu.Unlock()
	if now := time.Now(); now.Sub(s.badLogged) >= time.Second {
		s.o.Log.Printf("bad token from %s (%d more not logged)", addr, s.badQuiet)
		s.badLogged, s.badQuiet = now, 0
		return
	}
	s.badQuiet++
}

//go:embed static
var staticFiles embed.FS

// NewServer reads the host once and starts the poller and the scope's
// reader. Close stops them and undoes what the scope added to the host.
func NewServer(o Options) (*Server, error) {
	if o.View == nil || o.Control == nil || o.Attach == nil || o.Token == "" {
		panic("halweb.NewServer: View, Control, Attach and Token are required")
	}
	if o.Rate == 0 {
		o.Rate = 20
	}
	if o.Depth == 0 {
		o.Depth = DefaultDepth
	}
	if o.MaxClients == 0 {
		o.MaxClients = DefaultMaxClients
	}
	if o.Log == nil {
		o.Log = log.New(io.Discard, "", 0)
	}
	snap, err := o.View.Read()
	if err != nil {
		return nil, fmt.Errorf("read the host: %w", err)
	}
	s := &Server{o: o, stop: make(chan struct{}), hub: newHub(o.MaxClients, o.Log), readAt: time.Now()}
	s.snap.Store(&snap)
	s.scope = newScope(s)
	if o.SamplerCh >= 0 {
		if err := s.scope.initFixed(); err != nil {
			return nil, fmt.Errorf("sampler channel %d: %w", o.SamplerCh, err)
		}
	}
	s.mux = s.routes()
	s.wg.Add(2)
	go s.poll()
	go s.scope.read()
	return s, nil
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// Serve serves HTTP on ln until ctx ends, then shuts the server down.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       10 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          s.o.Log,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(limitListener(ln, MaxConns)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.hub.closeAll()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	<-errc
	return nil
}

// Close stops the poller and the scope, drops every client and undoes
// what the scope added to the host. A second Close does nothing.
func (s *Server) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.stop)
	s.hub.closeAll()
	s.wg.Wait()
	return s.scope.close()
}

// do runs one command in the host.
func (s *Server) do(verb string, args ...string) (string, error) {
	s.ctlMu.Lock()
	defer s.ctlMu.Unlock()
	return s.o.Control.Do(halfile.Command{Verb: verb, Args: args, File: "halweb", Line: 1})
}

// Snapshot is a read of the host at most one watch period (1/Rate) old.
func (s *Server) Snapshot() hal.Snapshot { return *s.snapshot(false) }

// snapshot reads the host again when the last read is older than one
// watch period, or when force is set; it keeps the last read while the
// host is gone or a read fails (a change under way, or damage). halweb
// reads the host only when someone looks: a watch list, the tree, a
// change to check.
func (s *Server) snapshot(force bool) *hal.Snapshot {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	last := s.snap.Load()
	if s.gone.Load() || !force && time.Since(s.readAt) < time.Second/time.Duration(s.o.Rate) {
		return last
	}
	snap, err := s.o.View.Read()
	if err != nil {
		return last
	}
	s.snap.Store(&snap)
	s.readAt = time.Now()
	return &snap
}

// hostGone asks the view whether the host is gone.
func (s *Server) hostGone() bool {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	return s.o.View.HostGone()
}

// poll notices, once a second, when the host is gone, and sends the
// watch lists Rate times a second while a page has one.
func (s *Server) poll() {
	defer s.wg.Done()
	tick := time.NewTicker(time.Second / time.Duration(s.o.Rate))
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		if n%s.o.Rate == 0 && s.hostGone() {
			if !s.gone.Swap(true) {
				s.o.Log.Printf("the host is gone")
				s.hub.broadcast(mustJSON(map[string]any{"type": "host", "gone": true}))
			}
			continue
		}
		if s.gone.Load() || !s.hub.watching() {
			continue
		}
		s.hub.sendWatch(s.snapshot(true))
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	files := http.FileServerFS(static)
	mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /api/tree", s.authed(s.tree))
	mux.HandleFunc("GET /api/scope", s.authed(s.scopeGet))
	mux.HandleFunc("POST /api/scope", s.authed(s.posted(s.scopeSet)))
	mux.HandleFunc("POST /api/scope/run", s.authed(s.posted(s.scopeRun)))
	mux.HandleFunc("POST /api/scope/stop", s.authed(s.posted(s.scopeStop)))
	mux.HandleFunc("GET /api/capture.csv", s.authed(s.exportCSV))
	mux.HandleFunc("GET /api/capture.svg", s.authed(s.exportSVG))
	mux.HandleFunc("POST /api/set", s.authed(s.posted(s.set)))
	mux.HandleFunc("GET /ws", s.authed(s.ws))
	return secureHeaders(mux)
}

// secureHeaders sets the headers every answer carries: no framing, no
// sniffing, scripts and connections from this origin only.
func secureHeaders(next *http.ServeMux) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	}))
	return mux
}

// presented returns the token a request carries: its cookie or its
// Authorization: Bearer header.
func presented(r *http.Request) string {
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return strings.TrimPrefix(a, "Bearer ")
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return c.Value
	}
	return ""
}

// authed refuses a request without the token (401).
func (s *Server) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !tokenEqual(presented(r), s.o.Token) {
			http.Error(w, "halweb: no valid token", http.StatusUnauthorized)
			return
		}
		h(w, r)
	}
}

// sameOrigin reports whether a request's Origin, when it has one, is the
// server's own (the Host it was sent to): a page of another site cannot
// post to halweb or open its WebSocket with the user's cookie.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true // not from a browser page: the token decides
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}

// posted checks what a state-changing request must be: from this origin,
// JSON (a cross-site form cannot send that without a preflight) and at
// most MaxBody bytes.
func (s *Server) posted(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			http.Error(w, "halweb: cross-origin request refused", http.StatusForbidden)
			return
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			http.Error(w, "halweb: want Content-Type application/json", http.StatusUnsupportedMediaType)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		h(w, r)
	}
}

// decode reads a JSON body into v: 400 or 413 on failure.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		code := http.StatusBadRequest
		if errors.As(err, new(*http.MaxBytesError)) {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, "halweb: bad request: "+err.Error(), code)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// index serves the page; ?token=T (the right one) sets the cookie and
// sends the browser back to / without the token in its address bar.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	if t := r.URL.Query().Get("token"); t != "" {
		if !tokenEqual(t, s.o.Token) {
			s.logBadToken(r.RemoteAddr)
			http.Error(w, "halweb: wrong token", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.o.Token, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	page := "static/index.html"
	if !tokenEqual(presented(r), s.o.Token) {
		page = "static/login.html"
		w.WriteHeader(http.StatusUnauthorized)
	}
	b, _ := staticFiles.ReadFile(page)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b)
}

// Tree is what /api/tree answers: the HAL as halshow shows it. Values
// are text as halcmd prints them; names are the segments' (control
// characters replaced), to be shown as text, never as markup.
type Tree struct {
	HostPID    int          `json:"hostPid"`
	HostGone   bool         `json:"hostGone"`
	AllowSet   bool         `json:"allowSet"`
	BasePeriod int64        `json:"basePeriodNs"`
	Comps      []treeComp   `json:"comps"`
	Pins       []treePin    `json:"pins"`
	Params     []treeParam  `json:"params"`
	Signals    []treeSignal `json:"signals"`
	Threads    []treeThread `json:"threads"`
}

type treeComp struct {
	Name  string `json:"name"`
	ID    int    `json:"id"`
	PID   int    `json:"pid,omitempty"`
	Ready bool   `json:"ready"`
	User  bool   `json:"user"`
}

type treePin struct {
	Owner  string `json:"owner"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Dir    string `json:"dir"`
	Value  string `json:"value"`
	Signal string `json:"signal,omitempty"`
}

type treeParam struct {
	Owner string `json:"owner"`
	Name  string `json:"name"`
	Type  string `json:"type"`
	Dir   string `json:"dir"`
	Value string `json:"value"`
}

type treeSignal struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Value  string   `json:"value"`
	Writer string   `json:"writer,omitempty"`
	Pins   []string `json:"pins"`
}

type treeThread struct {
	Name     string      `json:"name"`
	PeriodNs int64       `json:"periodNs"`
	TimeNs   int64       `json:"timeNs"`
	TMaxNs   int64       `json:"tmaxNs"`
	Overruns int64       `json:"overruns"`
	State    string      `json:"state"`
	Functs   []treeFunct `json:"functs"`
}

type treeFunct struct {
	Name   string `json:"name"`
	TimeNs int64  `json:"timeNs"`
	TMaxNs int64  `json:"tmaxNs"`
}

// makeTree converts a snapshot.
func makeTree(snap *hal.Snapshot, gone, allowSet bool) Tree {
	t := Tree{HostPID: snap.HostPID, HostGone: gone || snap.HostClosed, AllowSet: allowSet, BasePeriod: int64(snap.BasePeriod),
		Comps: []treeComp{}, Pins: []treePin{}, Params: []treeParam{}, Signals: []treeSignal{}, Threads: []treeThread{}}
	for _, c := range snap.Comps {
		t.Comps = append(t.Comps, treeComp{c.Name, c.ID, c.PID, c.Ready, c.User})
	}
	for _, p := range snap.Pins {
		t.Pins = append(t.Pins, treePin{p.Owner, p.Name, p.Type.String(), p.Dir.String(), hal.FormatValue(p.Type, p.Value), p.Signal})
	}
	for _, p := range snap.Params {
		t.Params = append(t.Params, treeParam{p.Owner, p.Name, p.Type.String(), p.Dir.String(), hal.FormatValue(p.Type, p.Value)})
	}
	for _, g := range snap.Signals {
		pins := g.Pins
		if pins == nil {
			pins = []string{}
		}
		t.Signals = append(t.Signals, treeSignal{g.Name, g.Type.String(), hal.FormatValue(g.Type, g.Value), g.Writer, pins})
	}
	for _, th := range snap.Threads {
		tt := treeThread{Name: th.Name, PeriodNs: int64(th.Period), TimeNs: int64(th.Time), TMaxNs: int64(th.TMax),
			Overruns: th.Overruns, State: th.State, Functs: []treeFunct{}}
		for _, f := range th.Functs {
			tt.Functs = append(tt.Functs, treeFunct{f.Name, int64(f.Time), int64(f.TMax)})
		}
		t.Threads = append(t.Threads, tt)
	}
	return t
}

func (s *Server) tree(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(false)
	writeJSON(w, makeTree(snap, s.gone.Load(), s.o.AllowSet))
}

// SetRequest is what /api/set takes: setp NAME VALUE or sets NAME VALUE.
type SetRequest struct {
	Verb  string `json:"verb"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// checkSet refuses a change that is not a setp of a pin or parameter, or
// a sets of a signal, of this host, to one word: the host then applies
// its own rules (an OUT pin, a linked pin, an RO parameter, a bad value).
func checkSet(req SetRequest, snap *hal.Snapshot) error {
	if len(req.Value) == 0 || len(req.Value) > MaxValueLen {
		return fmt.Errorf("value: want 1 to %d bytes: %w", MaxValueLen, rtapi.ErrInvalid)
	}
	for _, r := range req.Value {
		if r <= ' ' || r == 0x7f || r == '"' || r == '\\' || r == '#' || r > 0x7e {
			return fmt.Errorf("value %q: want one word of printable ASCII: %w", req.Value, rtapi.ErrInvalid)
		}
	}
	switch req.Verb {
	case "setp":
		for _, p := range snap.Pins {
			if p.Name == req.Name {
				return nil
			}
		}
		for _, p := range snap.Params {
			if p.Name == req.Name {
				return nil
			}
		}
		return fmt.Errorf("setp: no pin or parameter %q: %w", req.Name, rtapi.ErrInvalid)
	case "sets":
		for _, g := range snap.Signals {
			if g.Name == req.Name {
				return nil
			}
		}
		return fmt.Errorf("sets: no signal %q: %w", req.Name, rtapi.ErrInvalid)
	}
	return fmt.Errorf("verb %q: want setp or sets: %w", req.Verb, rtapi.ErrInvalid)
}

func (s *Server) set(w http.ResponseWriter, r *http.Request) {
	if !s.o.AllowSet {
		http.Error(w, "halweb: read-only (start halweb with -allow-set)", http.StatusForbidden)
		return
	}
	var req SetRequest
	if !decode(w, r, &req) {
		return
	}
	if err := checkSet(req, s.snapshot(true)); err != nil {
		http.Error(w, "halweb: "+err.Error(), http.StatusBadRequest)
		return
	}
	_, err := s.do(req.Verb, req.Name, req.Value)
	s.o.Log.Printf("%s %s %s from %s (token holder): %s", req.Verb, req.Name, req.Value, r.RemoteAddr, errText(err))
	if err != nil {
		http.Error(w, "halweb: "+err.Error(), http.StatusBadRequest)
		return
	}
	writeJSON(w, map[string]string{"ok": req.Verb + " " + req.Name + " " + req.Value})
}

func errText(err error) string {
	if err == nil {
		return "done"
	}
	return "refused: " + err.Error()
}

// limitListener accepts at most n connections at once; the rest wait in
// the kernel's queue.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limited{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limited struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func (l *limited) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limited) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
