// Package control is the command channel of a running HAL host: a Unix
// socket on which another process (examples/halcmd) sends halcmd commands
// (net, unlinkp, addf, delf, newsig, delsig, save, show, ...) that the
// host runs with HAL.Exec on a non-real-time goroutine. Values are not
// set through it: halcmd stores them itself (hal.AttachData).
//
// The socket file is mode 0600 (0660 with a group), and each peer is
// checked with SO_PEERCRED: its uid must be the host's effective uid,
// root or in Options.AllowUIDs, or its gid Options.Group's
// (docs/SECURITY.md).
//
// Protocol: one request per line, a command as halfile.Command.String
// prints it (at most halfile.MaxLineLen); each answer is a line "ok N" or
// "error N" followed by N bytes of output or error text.
package control

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Default segment keys of a host (examples/halrun): "HALD" for the data
// tables, "HALS" for thread statistics.
const (
	DefaultDataKey  = 0x48414c44
	DefaultStatsKey = 0x48414c53
)

// SocketPath is dir/gortapi-<instance>-hal.sock; dir "" means /dev/shm.
func SocketPath(dir string, instance int) string {
	if dir == "" {
		dir = "/dev/shm"
	}
	return filepath.Join(dir, fmt.Sprintf("gortapi-%d-hal.sock", instance))
}

// Options say who besides the host's own user and root may connect.
type Options struct {
	// Group: members whose primary group is this one (a name or numeric
	// gid) may connect, and the socket is made mode 0660 of that group.
	Group string
	// AllowUIDs are further users who may connect.
	AllowUIDs []int
}

// Client is a connection to a host.
type Client struct {
	c  io.ReadWriteCloser
	rd *bufio.Reader
}

// Do sends one command and returns its output, or the host's *HostError.
func (c *Client) Do(cmd halfile.Command) (string, error) {
	line := cmd.String()
	if strings.ContainsAny(line, "\n") {
		return "", fmt.Errorf("control: a command word holds a newline: %w", errs.Invalid)
	}
	_, werr := io.WriteString(c.c, line+"\n")
	status, err := c.rd.ReadString('\n') // after a failed send too: the host may have said why
	if err != nil {
		if werr != nil {
			return "", fmt.Errorf("control: send: %w", werr)
		}
		return "", fmt.Errorf("control: the host closed the connection: %w", err)
	}
	kind, size, ok := strings.Cut(strings.TrimSuffix(status, "\n"), " ")
	n, nerr := strconv.Atoi(size)
	if !ok || nerr != nil || n < 0 || n > 64<<20 || (kind != "ok" && kind != "error") {
		return "", fmt.Errorf("control: bad answer %q: %w", status, errs.Corrupt)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.rd, body); err != nil {
		return "", fmt.Errorf("control: short answer: %w", err)
	}
	if kind == "error" {
		return "", &HostError{Msg: string(body)}
	}
	return string(body), nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// HostError is an error the host reported for a command (rtapi.ErrInvalid).
type HostError struct{ Msg string }

func (e *HostError) Error() string { return e.Msg }

// Unwrap gives rtapi.ErrInvalid.
func (e *HostError) Unwrap() error { return errs.Invalid }

func answer(w io.Writer, out string, err error) error {
	kind, body := "ok", out
	if err != nil {
		kind, body = "error", err.Error()
	}
	_, werr := fmt.Fprintf(w, "%s %d\n%s", kind, len(body), body)
	return werr
}
