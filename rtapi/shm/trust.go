package shm

import (
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
)

// lookupGroup resolves Options.Group: -1 for "", a gid for a number or a
// group name.
func lookupGroup(group string) (int, error) {
	if group == "" {
		return -1, nil
	}
	if gid, err := strconv.Atoi(group); err == nil {
		if gid < 0 {
			return -1, fmt.Errorf("%w: group %d is negative", ErrInvalid, gid)
		}
		return gid, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return -1, fmt.Errorf("%w: group %q: %v", ErrInvalid, group, err)
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return -1, fmt.Errorf("%w: group %q has gid %q", ErrInvalid, group, g.Gid)
	}
	return gid, nil
}

// distrust says why a file with this owner, group and mode may not be
// attached as euid under o, or "" when it may (package doc, "Trust").
func (o *Options) distrust(uid, gid int, mode os.FileMode, euid int) string {
	switch {
	case !mode.IsRegular():
		return "it is not a regular file (" + mode.Type().String() + ")"
	case mode&0o002 != 0:
		return "it is writable by every user"
	case mode&0o020 != 0 && (o.gid < 0 || gid != o.gid):
		return fmt.Sprintf("it is writable by group %d, which is not Options.Group", gid)
	case uid == euid, uid == 0, slices.Contains(o.AllowUIDs, uid):
		return ""
	case o.gid >= 0 && gid == o.gid:
		return ""
	}
	return fmt.Sprintf("it is owned by uid %d, a user this process does not trust", uid)
}
