// Package halctl is the one command channel of a running HAL host: a
// Unix socket on which another process (examples/halcmd) sends halcmd
// commands (setp, sets, getp, net, unlinkp, addf, delf, newsig, delsig,
// save, show, ...) that the host runs with HAL.Exec on a non-real-time
// goroutine, one at a time. Other processes read the host through
// hal.View, read-only; every change comes through here (HACKING.md, "One
// way into a running HAL").
//
// The socket lies in a directory that only the host's user (or root) may
// write (SocketPath, DefaultDir), so no other user can plant one where a
// client looks. The socket file is mode 0600 (0660 with a group), and the
// host checks each peer with SO_PEERCRED and SO_PEERGROUPS: its uid must
// be the host's effective uid or root, or Options.Group one of its
// groups, primary or supplementary: the users who may read the host's
// segments. The client
// (Dial) checks the directory and, with SO_PEERCRED, that the listener is
// root or its own user, and escapes the control bytes of every answer
// (docs/SECURITY.md, "The control socket").
//
// Protocol: one request per line, a command as halfile.Command.String
// prints it (at most halfile.MaxLineLen); each answer is a line "ok N",
// "error N" or "busy N" (try again later) followed by N bytes of output
// or error text. A request may begin with "-s " (ScriptPrefix): the
// host then runs the command as halcmd -s would (hal.ExecOptions.Script:
// show prints LinuxCNC's scriptmode formats); the line with its prefix
// is still at most halfile.MaxLineLen, and a user-component request
// with the prefix is refused.
//
// User-space components (LinuxCNC's loadusr programs: an HMI, a fieldbus
// bridge) make their component in the host over their own connection,
// under the same who-may check, with these requests besides halcmd's:
//
//	newcomp COMP                      a component of this connection (show comp: User, the peer's pid)
//	newpin COMP NAME TYPE in|out|io   a pin of it (NAME is the full name, "panel.jog")
//	newparam COMP NAME TYPE ro|rw     a parameter of it
//	ready COMP                        it is complete (hal_ready)
//	setown NAME VALUE [NAME VALUE]... write its Out or IO pins or its parameters (Component.SetOwn),
//	                                  in order; the first failure ends the request
//
// It reads its In pins with getp, or at its own pace through hal.View.
// When the connection ends, for any reason, the host removes the
// connection's components and their pins (unlinked; the signals stay),
// as LinuxCNC does when a user component exits or dies.
package halctl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Default segment keys of a host (examples/halrun): "HALD" for the data
// tables, "HALS" for thread statistics.
const (
	DefaultDataKey  = 0x48414c44
	DefaultStatsKey = 0x48414c53
)

// RootDir is the socket directory of hosts run by root.
const RootDir = "/run/gortapi"

// MaxConns is how many control connections a host serves at once; the
// next is answered with an error matching rtapi.ErrBusy and closed, so
// that one user cannot spend the host's file descriptors.
const MaxConns = 16

// SocketPath is the control socket of instance in dir,
// dir/gortapi-<instance>-hal.sock; dir "" means DefaultDir(). Hosts
// (examples/halrun, examples/halhost) and clients (examples/halcmd, Dial)
// find the socket through it alone. Serve and Dial refuse a dir that
// anyone but its owner, the host's user or root, may write.
func SocketPath(dir string, instance int) string {
	if dir == "" {
		dir = DefaultDir()
	}
	return filepath.Join(dir, fmt.Sprintf("gortapi-%d-hal.sock", instance))
}

// DefaultDir is where this process's hosts put their sockets: RootDir for
// root, $XDG_RUNTIME_DIR/gortapi for others, or /tmp/gortapi-<euid>
// without XDG_RUNTIME_DIR. Serve creates the last element, mode 0700
// (0750 of Options.Group). Never /dev/shm, where every user may create a
// file.
func DefaultDir() string { return defaultDir(os.Geteuid(), os.Getenv("XDG_RUNTIME_DIR")) }

func defaultDir(euid int, xdg string) string {
	switch {
	case euid == 0:
		return RootDir
	case filepath.IsAbs(xdg):
		return filepath.Join(xdg, "gortapi")
	}
	return fmt.Sprintf("/tmp/gortapi-%d", euid)
}

// DialInstance connects to the host of instance: the socket in dir, or
// with dir "" the one in DefaultDir(), else (a non-root user, as a member
// of a root host's group) the one in RootDir. The result is
// DialTrusting's with o.
func DialInstance(dir string, instance int, o Options) (*Client, error) {
	paths := []string{SocketPath(dir, instance)}
	if dir == "" && os.Geteuid() != 0 {
		paths = append(paths, SocketPath(RootDir, instance))
	}
	var missing []error
	for _, p := range paths {
		c, err := DialTrusting(p, o)
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			return c, err
		}
		missing = append(missing, err)
	}
	return nil, errors.Join(missing...)
}

// SocketError says why a control socket or its directory is refused, or
// why no host answers on it. It matches Err: os.ErrPermission (an
// untrusted directory, file or listener), os.ErrNotExist (no host: no
// socket, or one left over by a host that ended) or os.ErrExist (a live
// host holds the socket Serve was to create).
type SocketError struct {
	What   string // "socket" or "directory"
	Path   string
	Reason string // "is served by uid 65534 (pid 812), not a trusted host ..."
	Err    error
}

func (e *SocketError) Error() string {
	return "halctl: " + e.What + " " + e.Path + " " + e.Reason
}

// Unwrap gives Err.
func (e *SocketError) Unwrap() error { return e.Err }

// Options say who besides the host's own user and root may connect
// (Serve) and which hosts a client trusts (DialTrusting).
type Options struct {
	// Group: members of this group (a name or numeric gid), as their
	// primary or a supplementary group, may connect, as they may read the
	// host's segments (mode 0640 of the group); the socket is made mode
	// 0660 of that group, and a directory Serve creates 0750. Serve's
	// default is the HAL's group (hal.HAL.ShmGroup). A negative or
	// out-of-range gid or an unknown name is rtapi.ErrInvalid, by
	// rtapi/shm's Options.Group rule.
	Group string
	// AllowUIDs are further users whose hosts DialTrusting trusts. Serve
	// ignores it: who may command a host is who may read its segments.
	AllowUIDs []int
}

// Client is a connection to a host.
type Client struct {
	c  io.ReadWriteCloser
	rd *bufio.Reader
}

// ScriptPrefix begins a request that the host runs in halcmd's script
// mode (Client.DoScript).
const ScriptPrefix = "-s "

// Do sends one command and returns its output, or the host's *HostError.
// Control bytes in the output or error text are escaped (escapeControl),
// so a host cannot drive the terminal that prints them.
func (c *Client) Do(cmd halfile.Command) (string, error) {
	return c.do(cmd.String())
}

// DoScript is Do for halcmd -s: the host prints show in LinuxCNC's
// scriptmode formats (hal.ExecOptions.Script). A host older than this
// request answers it with an error.
func (c *Client) DoScript(cmd halfile.Command) (string, error) {
	return c.do(ScriptPrefix + cmd.String())
}

func (c *Client) do(line string) (string, error) {
	if strings.ContainsAny(line, "\n") {
		return "", fmt.Errorf("halctl: a command word holds a newline: %w", errs.Invalid)
	}
	_, werr := io.WriteString(c.c, line+"\n")
	status, err := c.rd.ReadString('\n') // after a failed send too: the host may have said why
	if err != nil {
		if werr != nil {
			return "", fmt.Errorf("halctl: send: %w", werr)
		}
		return "", fmt.Errorf("halctl: the host closed the connection: %w", err)
	}
	kind, size, ok := strings.Cut(strings.TrimSuffix(status, "\n"), " ")
	n, nerr := strconv.Atoi(size)
	if !ok || nerr != nil || n < 0 || n > 64<<20 || (kind != "ok" && kind != "error" && kind != "busy") {
		return "", fmt.Errorf("halctl: bad answer %q: %w", status, errs.Corrupt)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.rd, body); err != nil {
		return "", fmt.Errorf("halctl: short answer: %w", err)
	}
	if kind != "ok" {
		return "", &HostError{Msg: escapeControl(string(body)), busy: kind == "busy"}
	}
	return escapeControl(string(body)), nil
}

// escapeControl writes the control bytes of s as Go escapes: C0 but
// newline and tab (\x1b), DEL (\x7f), C1 as the code points U+0080 to
// U+009F (\u009b) and any byte that is not UTF-8 (\x9b, the 8-bit CSI,
// among them). Printable UTF-8 passes unchanged.
func escapeControl(s string) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r < 0x80 && needsEscape(r):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape: C0 but newline and tab, DEL, C1, and the RuneError of a
// byte that is not UTF-8.
func needsEscape(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || r == utf8.RuneError
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// HostError is an error the host reported for a command (rtapi.ErrInvalid),
// or its refusal to serve one more connection now (rtapi.ErrBusy).
type HostError struct {
	Msg  string
	busy bool
}

func (e *HostError) Error() string { return e.Msg }

// Unwrap gives rtapi.ErrInvalid, or rtapi.ErrBusy for a host that was busy.
func (e *HostError) Unwrap() error {
	if e.busy {
		return errs.Busy
	}
	return errs.Invalid
}

func answer(w io.Writer, out string, err error) error {
	kind, body := "ok", out
	switch {
	case errors.Is(err, errs.Busy):
		kind, body = "busy", err.Error()
	case err != nil:
		kind, body = "error", err.Error()
	}
	_, werr := fmt.Fprintf(w, "%s %d\n%s", kind, len(body), body)
	return werr
}
