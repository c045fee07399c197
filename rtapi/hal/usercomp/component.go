package usercomp

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halctl"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Environment variables a host gives the programs it starts (Env), read
// by New.
const (
	// EnvSocket is the host's control socket.
	EnvSocket = "GORTAPI_HAL_SOCKET"
	// EnvInstance is the host's rtapi instance, as rtapi reads it.
	EnvInstance = "RTAPI_INSTANCE"
)

// Env is the environment a host adds for a program it starts: its socket
// and its instance.
func Env(socket string, instance int) []string {
	return []string{EnvSocket + "=" + socket, EnvInstance + "=" + strconv.Itoa(instance)}
}

// Options say which host New joins. The zero value joins the host named
// by the environment ($GORTAPI_HAL_SOCKET, else the instance of
// $RTAPI_INSTANCE in halctl.DefaultDir), the one a host's loadusr
// started the program for.
type Options struct {
	// Socket is the host's control socket; "": $GORTAPI_HAL_SOCKET, else
	// found by instance (halctl.DialInstance).
	Socket string
	// Dir is the host's socket directory (its -shm-dir) where Socket and
	// $GORTAPI_HAL_SOCKET are empty; "": halctl.DefaultDir.
	Dir string
	// Instance is the host's rtapi instance where Socket and
	// $GORTAPI_HAL_SOCKET are empty; 0: $RTAPI_INSTANCE, else 0.
	Instance int
	// Group: trust a host whose socket directory has this group, as
	// halctl.Options.Group.
	Group string
}

// resolve gives the socket to dial ("": by dir and instance) from o and
// the environment.
func (o Options) resolve(getenv func(string) string) (socket, dir string, instance int, err error) {
	if o.Socket != "" {
		return o.Socket, "", 0, nil
	}
	if s := getenv(EnvSocket); s != "" {
		return s, "", 0, nil
	}
	instance = o.Instance
	if v := getenv(EnvInstance); instance == 0 && v != "" {
		if instance, err = strconv.Atoi(v); err != nil || instance < 0 {
			return "", "", 0, fmt.Errorf("usercomp: %s=%q is no instance number: %w", EnvInstance, v, errs.Invalid)
		}
	}
	return "", o.Dir, instance, nil
}

// Component is a user-space component in a running host. Its methods
// are safe for concurrent use; each is one request and its answer on the
// connection, a round trip to the host.
type Component struct {
	mu     sync.Mutex
	c      *halctl.Client
	name   string
	closed bool
}

// New connects to the host o names and makes component name there, owned
// by this connection (halctl "newcomp"). The host removes it when Close
// is called or the process ends. A host that is not trusted, or that does
// not trust this user, is refused (errors matching os.ErrPermission); a
// name in use is ErrInvalid.
func New(name string, o Options) (*Component, error) {
	socket, dir, instance, err := o.resolve(os.Getenv)
	if err != nil {
		return nil, err
	}
	var cl *halctl.Client
	if socket != "" {
		cl, err = halctl.DialTrusting(socket, halctl.Options{Group: o.Group})
	} else {
		cl, err = halctl.DialInstance(dir, instance, halctl.Options{Group: o.Group})
	}
	if err != nil {
		return nil, fmt.Errorf("usercomp: no HAL host to join: %w", err)
	}
	c := &Component{c: cl, name: name}
	if err := c.do("newcomp", name); err != nil {
		cl.Close()
		return nil, err
	}
	return c, nil
}

// Name is the component's name.
func (c *Component) Name() string { return c.name }

// full is the full name of the component's item name: "jog" is
// "panel.jog".
func (c *Component) full(name string) string { return c.name + "." + name }

var dirWords = map[hal.Dir]string{hal.In: "in", hal.Out: "out", hal.IO: "io"}

// NewPin makes pin COMP.name of type t and direction d, as
// hal_pin_new. Pins are made before Ready. The component writes its Out
// and IO pins (Set); its In pins are written by their signal or setp.
func (c *Component) NewPin(name string, t hal.Type, d hal.Dir) error {
	w, ok := dirWords[d]
	if !ok {
		return fmt.Errorf("usercomp: pin %q: direction %v: %w", name, d, errs.Invalid)
	}
	return c.do("newpin", c.name, c.full(name), t.String(), w)
}

// NewParam makes parameter COMP.name of type t, read-only (RO: only the
// component writes it) or read-write (RW: setp too), as hal_param_new.
func (c *Component) NewParam(name string, t hal.Type, d hal.ParamDir) error {
	w := map[hal.ParamDir]string{hal.RO: "ro", hal.RW: "rw"}[d]
	if w == "" {
		return fmt.Errorf("usercomp: parameter %q: direction %v: %w", name, d, errs.Invalid)
	}
	return c.do("newparam", c.name, c.full(name), t.String(), w)
}

// Ready marks the component complete, as hal_ready: loadusr -W returns,
// and no more pins may be made.
func (c *Component) Ready() error { return c.do("ready", c.name) }

// Set writes value, in halcmd's syntax for the item's type ("1.5",
// "TRUE", "-3", "0x10"), to the component's Out or IO pin or parameter
// name ("jog" for COMP.jog). An In pin is refused (ErrInvalid).
func (c *Component) Set(name, value string) error { return c.SetMany(name, value) }

// SetMany writes NAME VALUE pairs as Set, in one request: in order, the
// first that fails ending it (those before it stay written).
func (c *Component) SetMany(pairs ...string) error {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return fmt.Errorf("usercomp: SetMany takes NAME VALUE pairs, not %d words: %w", len(pairs), errs.Invalid)
	}
	args := make([]string, len(pairs))
	for i, p := range pairs {
		if i%2 == 0 {
			p = c.full(p)
		}
		args[i] = p
	}
	return c.do("setown", args...)
}

// Get reads the value of the component's pin or parameter name ("pos"
// for COMP.pos) as halcmd getp prints it ("1.5", "TRUE").
func (c *Component) Get(name string) (string, error) {
	out, err := c.request("getp", c.full(name))
	return strings.TrimSuffix(out, "\n"), err
}

// Close ends the connection: the host removes the component and its
// pins, their signals stay. Further calls return ErrClosed.
func (c *Component) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return c.c.Close()
}

func (c *Component) do(verb string, args ...string) error {
	_, err := c.request(verb, args...)
	return err
}

func (c *Component) request(verb string, args ...string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return "", fmt.Errorf("usercomp: component %q: %w", c.name, errs.Closed)
	}
	out, err := c.c.Do(halfile.Command{Verb: verb, Args: args})
	if err != nil {
		return "", fmt.Errorf("usercomp: %s %s: %w", verb, strings.Join(args, " "), err)
	}
	return out, nil
}
