package shm

import (
	"fmt"
	"os"
	"slices"
)

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
