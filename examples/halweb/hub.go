package main

import (
	"context"
	"encoding/json"
	"log"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// hub holds the live page connections. Sends never block: a client whose
// queue is full is dropped.
type hub struct {
	max     int
	log     *log.Logger
	mu      sync.Mutex
	clients map[*client]struct{}
	closed  bool
}

// client is one page's WebSocket.
type client struct {
	addr    string
	send    chan []byte
	gone    chan struct{} // closed by drop
	why     string        // set before gone is closed
	once    sync.Once
	watchMu sync.Mutex
	watch   []string
}

func newHub(max int, l *log.Logger) *hub {
	return &hub{max: max, log: l, clients: map[*client]struct{}{}}
}

// join adds a client, or returns nil when max are connected.
func (h *hub) join(addr string) *client {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.clients) >= h.max {
		return nil
	}
	c := &client{addr: addr, send: make(chan []byte, sendQueue), gone: make(chan struct{})}
	h.clients[c] = struct{}{}
	return c
}

func (h *hub) leave(c *client) {
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

// count is the clients connected.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// drop ends a client's connection, once, saying why.
func (c *client) drop(why string) {
	c.once.Do(func() {
		c.why = why
		close(c.gone)
	})
}

// queue gives c a message, or drops c if its queue is full.
func (h *hub) queue(c *client, b []byte) {
	select {
	case c.send <- b:
	default:
		h.log.Printf("dropped %s: too slow (%d messages waiting)", c.addr, sendQueue)
		c.drop("too slow")
	}
}

// broadcast gives every client a message.
func (h *hub) broadcast(b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		h.queue(c, b)
	}
}

// broadcastCapture gives every client a capture's messages, all or none:
// a client without room for them all skips this capture (it gets the
// next), so a slow page sees fewer captures and is never dropped for it.
func (h *hub) broadcastCapture(msgs [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		if cap(c.send)-len(c.send) < len(msgs)+sendQueue/4 {
			continue
		}
		for _, m := range msgs {
			h.queue(c, m)
		}
	}
}

// closeAll drops every client; no one joins after it.
func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for c := range h.clients {
		c.drop("server closing")
	}
}

// watchValue is one entry of a watch message.
type watchValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Type  string `json:"type,omitempty"`
}

// watching reports whether a client has a watch list.
func (h *hub) watching() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		c.watchMu.Lock()
		n := len(c.watch)
		c.watchMu.Unlock()
		if n > 0 {
			return true
		}
	}
	return false
}

// sendWatch sends each client the values of its watch list.
func (h *hub) sendWatch(snap *hal.Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var index map[string]watchValue
	for c := range h.clients {
		c.watchMu.Lock()
		names := c.watch
		c.watchMu.Unlock()
		if len(names) == 0 {
			continue
		}
		if index == nil {
			index = watchIndex(snap)
		}
		vals := make([]watchValue, 0, len(names))
		for _, n := range names {
			v, ok := index[n]
			if !ok {
				v = watchValue{Name: n, Value: "(gone)"}
			}
			vals = append(vals, v)
		}
		h.queue(c, mustJSON(map[string]any{"type": "watch", "values": vals}))
	}
}

// watchIndex maps the names a watch list may hold to their values: pins,
// then parameters, then signals.
func watchIndex(snap *hal.Snapshot) map[string]watchValue {
	m := make(map[string]watchValue, len(snap.Pins)+len(snap.Params)+len(snap.Signals))
	for _, g := range snap.Signals {
		m[g.Name] = watchValue{g.Name, hal.FormatValue(g.Type, g.Value), g.Type.String()}
	}
	for _, p := range snap.Params {
		m[p.Name] = watchValue{p.Name, hal.FormatValue(p.Type, p.Value), p.Type.String()}
	}
	for _, p := range snap.Pins {
		m[p.Name] = watchValue{p.Name, hal.FormatValue(p.Type, p.Value), p.Type.String()}
	}
	return m
}

// clientMessage is what a page sends on its WebSocket.
type clientMessage struct {
	Type  string   `json:"type"`
	Names []string `json:"names"`
}

// ws serves a page's WebSocket: server messages (watch values, scope
// state and captures) out, watch lists in.
func (s *Server) ws(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		s.o.Log.Printf("refused a WebSocket from %s: origin %q", r.RemoteAddr, r.Header.Get("Origin"))
		http.Error(w, "halweb: cross-origin WebSocket refused", http.StatusForbidden)
		return
	}
	c := s.hub.join(r.RemoteAddr)
	if c == nil {
		http.Error(w, "halweb: too many connections", http.StatusServiceUnavailable)
		return
	}
	defer s.hub.leave(c)
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept answered
	}
	defer conn.CloseNow()
	conn.SetReadLimit(MaxBody)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	c.send <- mustJSON(map[string]any{"type": "hello", "allowSet": s.o.AllowSet, "fixed": s.o.SamplerCh >= 0})
	c.send <- s.scope.stateMessage()
	if last := s.scope.lastMessages(); last != nil {
		for _, m := range last {
			s.hub.queue(c, m)
		}
	}

	go func() { // reader: watch lists in
		defer cancel()
		window, n := time.Now(), 0
		for {
			_, b, err := conn.Read(ctx)
			if err != nil {
				if websocket.CloseStatus(err) == websocket.StatusMessageTooBig {
					s.o.Log.Printf("dropped %s: a message over %d bytes", c.addr, MaxBody)
				}
				c.drop("read: " + err.Error())
				return
			}
			if now := time.Now(); now.Sub(window) > time.Second {
				window, n = now, 0
			}
			if n++; n > maxMessagesPerSecond {
				s.o.Log.Printf("dropped %s: over %d messages a second", c.addr, maxMessagesPerSecond)
				c.drop("flood")
				return
			}
			var m clientMessage
			if err := json.Unmarshal(b, &m); err != nil || m.Type != "watch" || len(m.Names) > MaxWatch {
				s.o.Log.Printf("dropped %s: a bad message", c.addr)
				c.drop("bad message")
				return
			}
			for _, name := range m.Names {
				if len(name) == 0 || len(name) > hal.NameLen {
					c.drop("bad name")
					return
				}
			}
			c.watchMu.Lock()
			c.watch = m.Names
			c.watchMu.Unlock()
		}
	}()

	for { // writer: messages out, never longer than writeTimeout each
		select {
		case b := <-c.send:
			wctx, wcancel := context.WithTimeout(ctx, writeTimeout)
			err := writeMessage(wctx, conn, b)
			wcancel()
			if err != nil {
				c.drop("write: " + err.Error())
				return
			}
		case <-c.gone:
			code := websocket.StatusPolicyViolation
			if c.why == "server closing" {
				code = websocket.StatusGoingAway
			}
			conn.Close(code, c.why[:min(len(c.why), 100)])
			return
		case <-ctx.Done():
			return
		}
	}
}

// maxWrite bounds a WebSocket frame, and so one write system call: a
// capture's rows (hundreds of KiB) go out as fragments of one message.
// Each is a short stay in the kernel, which does not always preempt a
// system call for a real-time thread woken on the same CPU.
const maxWrite = 16 << 10

// writeMessage writes b as one message, in frames of at most maxWrite
// bytes: a text message for JSON (b starts with '{'), else a binary one
// (rowsMessage).
func writeMessage(ctx context.Context, conn *websocket.Conn, b []byte) error {
	typ := websocket.MessageText
	if len(b) > 0 && b[0] != '{' {
		typ = websocket.MessageBinary
	}
	if len(b) <= maxWrite {
		return conn.Write(ctx, typ, b)
	}
	w, err := conn.Writer(ctx, typ)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		n := min(len(b), maxWrite)
		if _, err := w.Write(b[:n]); err != nil {
			return err // the caller drops the connection
		}
		b = b[n:]
	}
	return w.Close()
}
