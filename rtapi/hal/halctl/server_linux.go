//go:build linux

package halctl

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/internal/group"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Server serves a HAL's command socket.
type Server struct {
	h     *hal.HAL
	ln    *net.UnixListener
	path  string
	gid   int           // -1: no group
	slots chan struct{} // one per connection served, MaxConns
	stop  chan struct{} // closed by Close: ends accept's back-off
	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
	done  bool
}

// Serve listens on path and runs each connection's commands on h, one at
// a time, on its own goroutine, at most MaxConns connections at once.
// Serve creates path's directory if missing (mode 0700, 0750 of
// Options.Group) and refuses one that is a symlink, is not owned by this
// user or root, or that others may write (*SocketError,
// os.ErrPermission). A dead host's socket file is replaced; one a host of
// this user or root listens on is os.ErrExist; one another user listens
// on is os.ErrPermission naming its uid.
func Serve(h *hal.HAL, path string, o Options) (*Server, error) {
	o.Group = cmp.Or(o.Group, h.ShmGroup())
	gid, err := group.Lookup(o.Group)
	if err != nil {
		return nil, err
	}
	if err := makeDir(filepath.Dir(path), gid); err != nil {
		return nil, err
	}
	if err := clearStale(path); err != nil {
		return nil, err
	}
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("halctl: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if gid >= 0 {
		if err := os.Chown(path, -1, gid); err != nil {
			ln.Close()
			return nil, fmt.Errorf("halctl: give %s to group %s: %w", path, o.Group, err)
		}
		if err := os.Chmod(path, 0o660); err != nil {
			ln.Close()
			return nil, fmt.Errorf("halctl: %w", err)
		}
	}
	s := &Server{h: h, ln: ln, path: path, gid: gid,
		slots: make(chan struct{}, MaxConns), stop: make(chan struct{}), conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// makeDir creates dir (its last element) if missing and checks it as
// Dial does. RootDir, shared by root's hosts, is made 0755 (each socket's
// mode guards it); another directory 0700, or 0750 of group gid.
func makeDir(dir string, gid int) error {
	mode := os.FileMode(0o700)
	switch {
	case dir == RootDir:
		mode = 0o755
	case gid >= 0:
		mode = 0o750
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(dir, mode); err == nil {
			// Chmod: the umask may have narrowed the mode.
			if gid >= 0 && dir != RootDir {
				err = os.Chown(dir, -1, gid)
			}
			if err = errors.Join(err, os.Chmod(dir, mode)); err != nil {
				return fmt.Errorf("halctl: make the socket directory %s: %w", dir, err)
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("halctl: make the socket directory: %w", err)
		}
	}
	return checkDir(dir)
}

// clearStale removes the socket file at path of a host that ended; a
// file that is no socket, or a socket someone listens on, stays and is
// an error.
func clearStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("halctl: %w", err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return &SocketError{"socket", path, "exists and is not a socket but " + typeName(fi.Mode()) + "; remove it", os.ErrExist}
	}
	c, cred, err := dialPeer(path)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("halctl: remove stale socket: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("halctl: probe %s: %w", path, err)
	}
	c.Close()
	if !trustedHost(cred.Uid) {
		return untrustedListener(path, cred)
	}
	return &SocketError{"socket", path, fmt.Sprintf("is held by a live host (pid %d, uid %d)", cred.Pid, cred.Uid), os.ErrExist}
}

// Path is the socket's file.
func (s *Server) Path() string { return s.path }

// permitted decides on a peer's credentials: its uid, primary gid and
// supplementary groups.
func (s *Server) permitted(uid, gid uint32, groups []uint32) bool {
	return mayCommand(os.Geteuid(), s.gid, uid, gid, groups)
}

// mayCommand is a host's one who-may rule, the socket's and the
// segments': the host's user (hostUID), root, or a member of group gid
// (-1: none) by its primary or a supplementary group, the users the
// kernel lets read a segment of mode 0640 of that group.
func mayCommand(hostUID, gid int, uid, pgid uint32, groups []uint32) bool {
	switch {
	case int(uid) == hostUID, uid == 0:
		return true
	case gid >= 0 && (int(pgid) == gid || slices.Contains(groups, uint32(gid))):
		return true
	}
	return false
}

// errBusy answers a connection over MaxConns.
var errBusy = fmt.Errorf("halctl: %d control connections are open, the most a host serves at once: %w", MaxConns, errs.Busy)

// accept runs until Close. Errors of accept (EMFILE, ENFILE, ENOBUFS,
// ECONNABORTED, ...) do not end it: it waits 5 ms, doubling to 1 s while
// they last, as net/http's Server.Serve does, and tries again.
func (s *Server) accept() {
	defer s.wg.Done()
	var delay time.Duration
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			delay = backoff(delay)
			t := time.NewTimer(delay)
			select {
			case <-s.stop:
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		delay = 0
		select {
		case s.slots <- struct{}{}:
		default:
			// The answer fits the new socket's empty buffer; the deadline
			// only guards the loop.
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_ = answer(c, "", errBusy)
			c.Close()
			continue
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

// backoff is the wait after an accept error that followed one of delay.
func backoff(delay time.Duration) time.Duration {
	if delay == 0 {
		return 5 * time.Millisecond
	}
	return min(2*delay, time.Second)
}

func (s *Server) serve(c *net.UnixConn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
		<-s.slots
	}()
	cred, groups, err := peer(c)
	if err != nil || !s.permitted(cred.Uid, cred.Gid, groups) {
		who := "unknown peer"
		if cred != nil {
			who = fmt.Sprintf("uid %d gid %d (pid %d)", cred.Uid, cred.Gid, cred.Pid)
		}
		// Answer its first request so it reads the refusal, not a broken
		// pipe; a peer that sends nothing waits a second.
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		_, _ = readLine(bufio.NewReaderSize(c, 4096))
		_ = answer(c, "", fmt.Errorf("halctl: %s may not command this host: %w", who, os.ErrPermission))
		return
	}
	u := &userConn{h: s.h, pid: int(cred.Pid)}
	defer u.close() // its end is the user component's: never the host's
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
		var out bytes.Buffer
		rest, script := strings.CutPrefix(line, ScriptPrefix)
		if script {
			line = rest
			if isUserRequest(line) {
				if answer(w, "", fmt.Errorf("halctl: %q is for halcmd commands, not user-component requests: %w", ScriptPrefix, errs.Invalid)) != nil || w.Flush() != nil {
					return
				}
				continue
			}
		}
		if user, err := u.do(line); user {
			if answer(w, "", err) != nil || w.Flush() != nil {
				return
			}
			continue
		}
		cmd, ok, err := halfile.ParseLine(line)
		if err == nil && ok && cmd.Verb == "save" && len(cmd.Args) > 1 {
			// The host writes no file a client names: halcmd writes
			// "save KIND FILE" itself, from the host's "save KIND".
			err = fmt.Errorf("halctl: save FILE is written by halcmd, not by the host: send save %s: %w", halfile.Quote(cmd.Args[0]), errs.Invalid)
		} else if err == nil && ok {
			cmd.File, cmd.Line = "halcmd", n
			err = s.h.ExecWith(&out, cmd, hal.ExecOptions{Script: script})
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

var errTooLong = fmt.Errorf("halctl: command longer than %d bytes: %w", halfile.MaxLineLen, errs.Invalid)

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
	close(s.stop)
	err := s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}
