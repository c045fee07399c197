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
	// once. Further connections wait in the kernel's accept queue, where
	// they cost the host process nothing: no goroutine, no buffer, no
	// allocation. One connection (and the in-flight limit of Handler)
	// lets the network make at most one HTTP goroutine of the host
	// runnable at a time, so a scrape flood cannot take every P from a
	// real-time task woken next to it.
	MaxConns = 1
	// ReadHeaderTimeout is how long a connection may take to send its
	// request's headers; IdleTimeout how long a kept-alive connection may
	// wait for its next request. A slow or silent client holds the
	// connection slot no longer.
	ReadHeaderTimeout = 2 * time.Second
	IdleTimeout       = 5 * time.Second
	// WriteTimeout bounds writing one response, past ScrapeTimeout.
	WriteTimeout = ScrapeTimeout + 5*time.Second
	// MaxHeaderBytes bounds a request's headers; a scrape's are a few
	// hundred bytes.
	MaxHeaderBytes = 8 << 10
)

// NewServer returns an *http.Server serving Handler(reg) at /metrics
// (404 elsewhere) with ReadHeaderTimeout, IdleTimeout, WriteTimeout and
// MaxHeaderBytes set; serve it on a listener from Listen or
// LimitListener. A bare http.Server has no timeouts: a client that
// connects and sends nothing holds its connection for ever.
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

// LimitListener returns a listener that holds at most n of l's
// connections open: Accept waits until one of them is closed before it
// accepts the next, which waits in the kernel's queue meanwhile. Close
// ends a waiting Accept. n < 1 counts as 1.
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
