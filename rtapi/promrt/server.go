package promrt

import (
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Limits of NewServer and Listen.
const (
	// MaxConns is how many scraper connections Listen keeps open at
	// once; the rest wait in the kernel's accept queue, costing the host
	// nothing.
	MaxConns = 1
	// ReadHeaderTimeout bounds a request's headers, IdleTimeout the wait
	// for a kept-alive connection's next request.
	ReadHeaderTimeout = 2 * time.Second
	IdleTimeout       = 5 * time.Second
	// WriteTimeout bounds writing one response, past ScrapeTimeout.
	WriteTimeout = ScrapeTimeout + 5*time.Second
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes = 8 << 10
)

// NewServer returns an *http.Server serving Handler(reg) at /metrics (404
// elsewhere) with the timeouts and MaxHeaderBytes above set, which a bare
// http.Server lacks. Serve it on a listener from Listen or LimitListener.
func NewServer(reg prometheus.Gatherer) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(reg))
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadHeaderTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// Listen listens on the TCP address addr and returns a listener holding
// at most MaxConns connections open (LimitListener).
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return LimitListener(ln, MaxConns), nil
}

// LimitListener returns a listener that holds at most n (at least 1) of
// l's connections open: Accept waits for one to close. Close ends a
// waiting Accept.
func LimitListener(l net.Listener, n int) net.Listener {
	return &limitListener{Listener: l, sem: make(chan struct{}, max(n, 1)), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{} // one token per open connection
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its slot back once, at the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
