//go:build linux

package control

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Server serves a HAL's command socket.
type Server struct {
	h     *hal.HAL
	ln    *net.UnixListener
	path  string
	gid   int // -1: no group
	allow []int
	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
	done  bool
}

// Serve listens on path and runs each connection's commands on h, one at
// a time, on its own goroutine. A dead host's socket file is replaced; a
// live host's is ErrExist.
func Serve(h *hal.HAL, path string, o Options) (*Server, error) {
	gid := -1
	if o.Group != "" {
		g, err := lookupGroup(o.Group)
		if err != nil {
			return nil, err
		}
		gid = g
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, fmt.Errorf("control: a host already listens on %s: %w", path, os.ErrExist)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("control: %s exists and is not a socket: %w", path, os.ErrExist)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("control: remove stale socket: %w", err)
		}
	}
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("control: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if gid >= 0 {
		if err := os.Chown(path, -1, gid); err != nil {
			ln.Close()
			return nil, fmt.Errorf("control: give %s to group %s: %w", path, o.Group, err)
		}
		if err := os.Chmod(path, 0o660); err != nil {
			ln.Close()
			return nil, fmt.Errorf("control: %w", err)
		}
	}
	s := &Server{h: h, ln: ln, path: path, gid: gid, allow: slices.Clone(o.AllowUIDs), conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func lookupGroup(name string) (int, error) {
	if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		return n, nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, fmt.Errorf("control: group %q: %w (%w)", name, err, errs.Invalid)
	}
	return strconv.Atoi(g.Gid)
}

// Path is the socket's file.
func (s *Server) Path() string { return s.path }

// permitted decides on a peer's credentials.
func (s *Server) permitted(uid, gid uint32) bool {
	switch {
	case int(uid) == os.Geteuid(), uid == 0, slices.Contains(s.allow, int(uid)):
		return true
	case s.gid >= 0 && int(gid) == s.gid:
		return true
	}
	return false
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func peer(c *net.UnixConn) (*unix.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	err = raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	return cred, errors.Join(err, cerr)
}

func (s *Server) serve(c *net.UnixConn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	cred, err := peer(c)
	if err != nil || !s.permitted(cred.Uid, cred.Gid) {
		who := "unknown peer"
		if cred != nil {
			who = fmt.Sprintf("uid %d gid %d (pid %d)", cred.Uid, cred.Gid, cred.Pid)
		}
		// Answer its first request so it reads the refusal, not a broken
		// pipe; a peer that sends nothing waits a second.
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		_, _ = readLine(bufio.NewReaderSize(c, 4096))
		_ = answer(c, "", fmt.Errorf("control: %s may not command this host: %w", who, os.ErrPermission))
		return
	}
	rd := bufio.NewReaderSize(c, 4096)
	w := bufio.NewWriter(c)
	for n := 1; ; n++ {
		line, err := readLine(rd)
		if err != nil {
			if !errors.Is(err, errTooLong) {
				return
			}
			_ = answer(w, "", err)
			_ = w.Flush()
			return
		}
		cmd, ok, err := halfile.ParseLine(line)
		var out bytes.Buffer
		if err == nil && ok {
			cmd.File, cmd.Line = "halcmd", n
			err = s.h.Exec(&out, cmd)
			var pe *halfile.Error
			if errors.As(err, &pe) {
				err = pe.Err // the client knows where the command came from
			}
		}
		if answer(w, out.String(), err) != nil || w.Flush() != nil {
			return
		}
	}
}

var errTooLong = fmt.Errorf("control: command longer than %d bytes: %w", halfile.MaxLineLen, errs.Invalid)

func readLine(rd *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, isPrefix, err := rd.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, chunk...)
		if len(b) > halfile.MaxLineLen {
			return "", errTooLong
		}
		if !isPrefix {
			return string(b), nil
		}
	}
}

// Close stops accepting, closes open connections, removes the socket file
// and returns once every command in progress has finished.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return nil
	}
	s.done = true
	err := s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// Dial connects to the host listening on path.
func Dial(path string) (*Client, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control: no host listens on %s: %w", path, err)
	}
	return &Client{c: c, rd: bufio.NewReader(c)}, nil
}
