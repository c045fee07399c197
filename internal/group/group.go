// Package group holds the one rule for a Unix group named from outside
// (rtapi/shm's and the control socket's Options.Group): a name in the
// group database or a decimal gid.
package group

import (
	"fmt"
	"math"
	"os/user"
	"strconv"
	"strings"

	"github.com/gortapi/gortapi/internal/errs"
)

// Error reports a group Lookup refused; it matches errs.Invalid.
type Error struct {
	Group  string // the group, as given
	Reason string // what is wrong with it
	Err    error  // the group database's error, if it gave one
}

func (e *Error) Error() string { return fmt.Sprintf("group %q %s", e.Group, e.Reason) }

// Is matches errs.Invalid.
func (e *Error) Is(target error) bool { return target == errs.Invalid }

// Unwrap gives the group database's error, or nil.
func (e *Error) Unwrap() error { return e.Err }

// Lookup returns the gid of group: -1 for "" (no group), the number for
// a decimal gid (0 to 4294967294, or to math.MaxInt if smaller;
// 4294967295 is chown's "no change"), or
// the gid the group database gives a name. Anything else, a negative
// number or a name with a control character included, is an *Error.
func Lookup(group string) (int, error) {
	if group == "" {
		return -1, nil
	}
	if digits := strings.TrimPrefix(group, "-"); digits != "" && strings.Trim(digits, "0123456789") == "" {
		n, err := strconv.ParseUint(digits, 10, 32)
		switch {
		case digits != group:
			return -1, &Error{Group: group, Reason: "is negative"}
		case err != nil || n == math.MaxUint32 || n > math.MaxInt:
			return -1, &Error{Group: group, Reason: "is out of range"}
		}
		return int(n), nil
	}
	if strings.ContainsFunc(group, func(r rune) bool { return r < ' ' || r == 0x7f || r == ':' }) {
		return -1, &Error{Group: group, Reason: "holds a control character or ':'"}
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return -1, &Error{Group: group, Reason: "is unknown", Err: err}
	}
	gid, err := strconv.ParseUint(g.Gid, 10, 32)
	if err != nil || gid == math.MaxUint32 {
		return -1, &Error{Group: group, Reason: fmt.Sprintf("has gid %q", g.Gid)}
	}
	return int(gid), nil
}
