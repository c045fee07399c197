//go:build linux

package halctl

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/group"
)

// Dial connects to the host listening on path. It refuses, with a
// *SocketError matching os.ErrPermission, a path whose directory is a
// symlink, is not owned by this user or root, or may be written by
// others; a path that is no socket; and a listener that is neither root
// nor this user (SO_PEERCRED). A missing socket, or one left over by a
// host that ended, is a *SocketError matching os.ErrNotExist.
// DialTrusting also reaches hosts of other users.
func Dial(path string) (*Client, error) { return DialTrusting(path, Options{}) }

// DialTrusting is Dial that also trusts, as segments are trusted
// (rtapi/shm's Options.Group and AllowUIDs), a host run by a user in
// o.AllowUIDs, or a host whose socket directory has group o.Group: the
// directory's owner, who alone may create entries in it, must then be
// the listener. A group-writable or world-writable directory is refused
// still. A bad o.Group is ErrInvalid.
func DialTrusting(path string, o Options) (*Client, error) {
	gid, err := group.Lookup(o.Group)
	if err != nil {
		return nil, err
	}
	owner, err := checkDirTrusting(filepath.Dir(path), gid, o.AllowUIDs)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &SocketError{"socket", path, "does not exist: no host listens there", os.ErrNotExist}
	}
	if err != nil {
		return nil, fmt.Errorf("halctl: %w", err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return nil, &SocketError{"socket", path, "is " + typeName(fi.Mode()) + ", not a socket", os.ErrPermission}
	}
	c, cred, err := dialPeer(path)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return nil, &SocketError{"socket", path, "is left over from a host that ended: no host listens on it", os.ErrNotExist}
	case err != nil:
		return nil, fmt.Errorf("halctl: no host listens on %s: %w", path, err)
	case !trustedHost(cred.Uid) && !slices.Contains(o.AllowUIDs, int(cred.Uid)) && int(cred.Uid) != owner:
		c.Close()
		return nil, untrustedListener(path, cred)
	}
	return &Client{c: c, rd: bufio.NewReader(c)}, nil
}

// trustedHost: a listener of root or of this process's user may serve
// it; as for segments, root can write this process anyway.
func trustedHost(uid uint32) bool { return uid == 0 || int(uid) == os.Geteuid() }

func untrustedListener(path string, cred *unix.Ucred) error {
	return &SocketError{"socket", path, fmt.Sprintf("is served by uid %d (pid %d), not a trusted host (root or uid %d); "+
		"remove it if it was planted", cred.Uid, cred.Pid, os.Geteuid()), os.ErrPermission}
}

// dialPeer connects to path and reads the listener's credentials.
func dialPeer(path string) (*net.UnixConn, *unix.Ucred, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, nil, err
	}
	cred, _, err := peer(c)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("SO_PEERCRED: %w", err)
	}
	return c, cred, nil
}

// checkDir refuses a socket directory others could plant a socket in.
func checkDir(dir string) error {
	_, err := checkDirTrusting(dir, -1, nil)
	return err
}

// checkDirTrusting is checkDir that also accepts a directory owned by a
// user in allow, or one of group gid (not -1) whatever its owner. It
// returns the directory's owner, the only user besides root who may
// create a socket in it.
func checkDirTrusting(dir string, gid int, allow []int) (owner int, err error) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return -1, &SocketError{"directory", dir, "does not exist: no host listens there", os.ErrNotExist}
	case errors.Is(err, syscall.EACCES):
		// Another user's runtime directory, say: no host this user can reach.
		return -1, &SocketError{"directory", dir, "cannot be reached by this user: no host it may command listens there", os.ErrNotExist}
	}
	if err != nil {
		return -1, fmt.Errorf("halctl: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, fmt.Errorf("halctl: stat %s: no owner: %w", dir, os.ErrPermission)
	}
	euid := os.Geteuid()
	if slices.Contains(allow, int(st.Uid)) || gid >= 0 && int(st.Gid) == gid {
		euid = int(st.Uid) // trusted as the owner is: only the mode is checked
	}
	if why := distrustDir(fi.Mode(), int(st.Uid), euid); why != "" {
		return -1, &SocketError{"directory", dir, why, os.ErrPermission}
	}
	return int(st.Uid), nil
}

// distrustDir says why a socket directory with this mode and owner may
// not be used by euid, or "" when it may: it must be a directory (not a
// symlink to one) of euid or root that neither group nor others may
// write.
func distrustDir(mode fs.FileMode, uid, euid int) string {
	switch {
	case !mode.IsDir():
		return "is " + typeName(mode) + ", not a directory"
	case mode&0o002 != 0:
		return fmt.Sprintf("is one every user may write (mode %04o): anyone could plant a socket in it; "+
			"use a directory only the host's user may write", mode.Perm())
	case mode&0o020 != 0:
		return fmt.Sprintf("is writable by its group (mode %04o): a member could plant a socket in it", mode.Perm())
	case uid != euid && uid != 0:
		return fmt.Sprintf("is owned by uid %d, neither this user (uid %d) nor root", uid, euid)
	}
	return ""
}

func typeName(m fs.FileMode) string {
	switch m.Type() {
	case fs.ModeSymlink:
		return "a symlink"
	case fs.ModeDir:
		return "a directory"
	case fs.ModeSocket:
		return "a socket"
	case 0:
		return "a regular file"
	}
	return "a special file (" + m.Type().String() + ")"
}

// peer gives the credentials of c's other end as they were when it
// connected or listened (SO_PEERCRED) and its supplementary groups
// (SO_PEERGROUPS, Linux 4.13; nil before).
func peer(c *net.UnixConn) (*unix.Ucred, []uint32, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	var cred *unix.Ucred
	var groups []uint32
	var cerr, gerr error
	err = raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		groups, gerr = peerGroups(int(fd))
	})
	if errors.Is(gerr, unix.ENOPROTOOPT) {
		gerr = nil // an older kernel: primary groups only
	}
	if err = errors.Join(err, cerr, gerr); err != nil {
		return nil, nil, err
	}
	return cred, groups, nil
}

// peerGroups is getsockopt(SO_PEERGROUPS): the supplementary groups the
// peer had when it connected, as the kernel recorded them (not racy, as
// reading /proc/PID/status would be).
func peerGroups(fd int) ([]uint32, error) {
	buf := make([]uint32, 32)
	for {
		size := uint32(4 * len(buf))
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_PEERGROUPS,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)), 0)
		runtime.KeepAlive(buf)
		switch {
		case e == unix.ERANGE && int(size) > 4*len(buf) && size <= 4*65536:
			buf = make([]uint32, size/4)
			continue
		case e != 0:
			return nil, os.NewSyscallError("getsockopt SO_PEERGROUPS", e)
		}
		return buf[:size/4], nil
	}
}
