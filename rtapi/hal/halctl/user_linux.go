//go:build linux

package halctl

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// userConn is what one connection made as a user-space component
// (LinuxCNC's loadusr programs): the components are its own, written only
// through it, and removed when it ends.
type userConn struct {
	h     *hal.HAL
	pid   int // the peer's, as SO_PEERCRED gave it
	comps []*hal.Component
}

// userVerbs are the requests of user-space components (package doc).
var userVerbs = []string{"newcomp", "newpin", "newparam", "ready", "setown"}

// isUserRequest reports whether line is a user-component request.
func isUserRequest(line string) bool {
	w := strings.Fields(line)
	return len(w) > 0 && slices.Contains(userVerbs, w[0])
}

// do runs a user-component request, or reports ok false for a line that
// is none (a halcmd command).
func (u *userConn) do(line string) (ok bool, err error) {
	if !isUserRequest(line) {
		return false, nil
	}
	w := strings.Fields(line)
	if w[0] == "setown" {
		return true, u.setown(w[1:])
	}
	want := map[string]int{"newcomp": 2, "newpin": 5, "newparam": 5, "ready": 2}[w[0]]
	if len(w) != want {
		return true, fmt.Errorf("%s takes %d arguments, not %d: %w", w[0], want-1, len(w)-1, errs.Invalid)
	}
	if w[0] == "newcomp" {
		c, err := u.h.NewUserComponent(w[1], u.pid)
		if err == nil {
			u.comps = append(u.comps, c)
		}
		return true, err
	}
	i := slices.IndexFunc(u.comps, func(c *hal.Component) bool { return c.Name() == w[1] })
	if i < 0 {
		return true, fmt.Errorf("%s: component %q is not one this connection made (newcomp): %w", w[0], w[1], errs.Invalid)
	}
	c := u.comps[i]
	if w[0] == "ready" {
		return true, c.Ready()
	}
	t, err := hal.ParseType(w[3])
	if err != nil {
		return true, err
	}
	dir := strings.ToLower(w[4])
	if w[0] == "newpin" {
		d := map[string]hal.Dir{"in": hal.In, "out": hal.Out, "io": hal.IO}[dir]
		c.Pin(w[2], t, d)
	} else {
		d := map[string]hal.ParamDir{"ro": hal.RO, "rw": hal.RW}[dir]
		c.Param(w[2], t, d)
	}
	return true, c.Err()
}

// setown writes NAME VALUE pairs, one or more, in order; the first that
// fails ends it, those before it stay written.
func (u *userConn) setown(args []string) error {
	if len(args) == 0 || len(args)%2 != 0 {
		return fmt.Errorf("setown takes NAME VALUE pairs, not %d arguments: %w", len(args), errs.Invalid)
	}
	for k := 0; k < len(args); k += 2 {
		name := args[k]
		i := slices.IndexFunc(u.comps, func(c *hal.Component) bool { return c.Owns(name) })
		if i < 0 {
			return fmt.Errorf("setown: %q is no pin or parameter of a component this connection made (newcomp): %w", name, errs.Invalid)
		}
		if err := u.comps[i].SetOwn(name, args[k+1]); err != nil {
			return err
		}
	}
	return nil
}

// close removes the connection's components, as LinuxCNC removes those
// of a user-space program that exits or dies; the host runs on.
func (u *userConn) close() error {
	var err error
	for _, c := range u.comps {
		if rerr := c.Remove(); rerr != nil && !errors.Is(rerr, errs.Closed) {
			err = errors.Join(err, rerr)
		}
	}
	u.comps = nil
	return err
}
