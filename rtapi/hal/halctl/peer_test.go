//go:build linux

package halctl

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// TestMain doubles as the second process of the tests below; os.Args[1]
// is a socket's path. Roles:
//   - "dial": send one command with Dial (the client's checks included)
//     and print the answer;
//   - "rawdial": the same over a bare connection, to test the host's
//     checks alone; "rawnewcomp" sends newcomp instead;
//   - "impostor": listen on the path, print "ready", and answer every
//     line "ok" with terminal escape sequences until stdin closes;
//   - "host": run a host on the path, print "ready" and serve until
//     stdin closes;
//   - "lowfd": run a host on the path with almost no file descriptors
//     left (RLIMIT_NOFILE), print "ready" and serve until stdin closes.
func TestMain(m *testing.M) {
	switch rttest.ChildRole() {
	case "dial", "rawdial", "rawnewcomp":
		var c *Client
		var err error
		if rttest.ChildRole() == "dial" {
			c, err = Dial(os.Args[1])
		} else {
			var conn net.Conn
			if conn, err = net.Dial("unix", os.Args[1]); err == nil {
				c = &Client{c: conn, rd: bufio.NewReader(conn)}
			}
		}
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(2)
		}
		cmd := halfile.Command{Verb: "newsig", Args: []string{"intruder", "bit"}}
		if rttest.ChildRole() == "rawnewcomp" {
			cmd = halfile.Command{Verb: "newcomp", Args: []string{"intruder"}}
		}
		_, err = c.Do(cmd)
		fmt.Println("answer:", err)
		os.Exit(0)
	case "impostor":
		os.Exit(impostor(os.Args[1]))
	case "lowfd":
		os.Exit(lowFDHost(os.Args[1]))
	case "host":
		os.Exit(plainHost(os.Args[1]))
	}
	os.Exit(rttest.Main(m))
}

// evilOutput is what a fake host prints: an OSC title change, a screen
// clear, a C1 CSI as a raw byte and as U+009B, a bell and a DEL.
const evilOutput = "\x1b]0;owned\x07\x1b[2Jstop done\x9b31m\u009b1m\x7f\n"

// fakeHost answers every line of every connection on ln "ok" with
// evilOutput, as an impostor would.
func fakeHost(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			rd := bufio.NewReader(c)
			for {
				if _, err := rd.ReadString('\n'); err != nil {
					return
				}
				fmt.Fprintf(c, "ok %d\n%s", len(evilOutput), evilOutput)
			}
		}()
	}
}

func impostor(path string) int {
	ln, err := net.Listen("unix", path)
	if err != nil {
		fmt.Println("listen:", err)
		return 2
	}
	_ = os.Chmod(path, 0o666)
	go fakeHost(ln)
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	ln.Close()
	return 0
}

func lowFDHost(path string) int {
	h, closeHost, err := newHost()
	if err != nil {
		fmt.Println("host:", err)
		return 2
	}
	defer closeHost()
	s, err := Serve(h, path, Options{})
	if err != nil {
		fmt.Println("serve:", err)
		return 2
	}
	defer s.Close()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		fmt.Println("fds:", err)
		return 2
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Println("getrlimit:", err)
		return 2
	}
	// Room for about three connections: a burst meets EMFILE at once.
	lim.Cur = uint64(len(fds) + 3)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Println("setrlimit:", err)
		return 2
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

func plainHost(path string) int {
	h, closeHost, err := newHost()
	if err != nil {
		fmt.Println("host:", err)
		return 2
	}
	defer closeHost()
	s, err := Serve(h, path, Options{Group: strconv.Itoa(int(rttest.Nobody.Gid))})
	if err != nil {
		fmt.Println("serve:", err)
		return 2
	}
	defer s.Close()
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// child starts cmd and waits for it to print "ready"; stdin closing ends it.
func child(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.Equal(t, "ready\n", line, "child: %v", err)
}

// worldDir is a directory every user may write, as /dev/shm is.
func worldDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "gortapi-world-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o1777))
	return dir
}

// A process of another user that reaches the socket (its file and
// directory opened up on purpose here) is refused by the SO_PEERCRED
// check, and its command is not run.
func TestPeerOfAnotherUserRefused(t *testing.T) {
	h, _ := host(t)
	dir, err := os.MkdirTemp("", "gortapi-peer-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "hal.sock")
	s, err := Serve(h, path, Options{})
	require.NoError(t, err)
	defer s.Close()
	cmd := rttest.ChildAs(t, rttest.Nobody, "rawdial", path)
	require.NoError(t, os.Chmod(dir, 0o777))
	require.NoError(t, os.Chmod(path, 0o666))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "may not command this host")
	assert.Contains(t, string(out), fmt.Sprintf("uid %d", rttest.Nobody.Uid))
	_, err = h.GetS("intruder")
	assert.Error(t, err, "the refused command did not run")
}

// Issue 37, 1: uid 65534 listens where root's halcmd dials. The client
// refuses the socket, naming its owner, and obeys none of its answers:
// in a directory every user may write, and (moved there by root, as a
// stand-in for any way the socket could get there) in a trusted one,
// where SO_PEERCRED still names the impostor. Before, Dial succeeded and
// Do returned the impostor's "ok".
func TestImpostorListenerRefused(t *testing.T) {
	world := worldDir(t)
	planted := filepath.Join(world, "hal.sock")
	child(t, rttest.ChildAs(t, rttest.Nobody, "impostor", planted))

	c, err := Dial(planted)
	if err == nil {
		out, derr := c.Do(halfile.Command{Verb: "stop"})
		c.Close()
		t.Fatalf("Dial of a socket in a world-writable directory succeeded; stop answered %q, %v", out, derr)
	}
	assert.ErrorIs(t, err, os.ErrPermission)
	var se *SocketError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "every user may write")

	moved := filepath.Join(t.TempDir(), "hal.sock")
	require.NoError(t, os.Rename(planted, moved))
	c, err = Dial(moved)
	if err == nil {
		out, derr := c.Do(halfile.Command{Verb: "stop"})
		c.Close()
		t.Fatalf("Dial of an impostor's socket succeeded; stop answered %q, %v", out, derr)
	}
	assert.ErrorIs(t, err, os.ErrPermission)
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), fmt.Sprintf("is served by uid %d", rttest.Nobody.Uid))
	assert.Contains(t, err.Error(), "not a trusted host")
}

// Issue 37, 1: a live listener of another user at the host's socket name
// is refused loudly by Serve, as ErrPermission naming the uid, not taken
// for a host of this user (ErrExist). Before: "a host already listens".
func TestServeRefusesForeignListener(t *testing.T) {
	h, path := host(t)
	world := worldDir(t)
	planted := filepath.Join(world, "hal.sock")
	child(t, rttest.ChildAs(t, rttest.Nobody, "impostor", planted))
	require.NoError(t, os.Rename(planted, path))
	_, err := Serve(h, path, Options{})
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrPermission)
	assert.NotErrorIs(t, err, os.ErrExist)
	assert.Contains(t, err.Error(), fmt.Sprintf("is served by uid %d", rttest.Nobody.Uid))
}

// Issue 37, 3: a peer whose group is the host's as a supplementary group
// (usermod -aG) may command the host, as it may write its segments (the
// kernel's file permissions count supplementary groups). Before, only the
// primary group of SO_PEERCRED counted and the command was refused.
func TestSupplementaryGroupPeerPermitted(t *testing.T) {
	const group = 4242
	h, _ := host(t)
	base, err := os.MkdirTemp("", "gortapi-group-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	dir := filepath.Join(base, "run")
	require.NoError(t, os.Mkdir(dir, 0o750))
	if err := os.Chown(dir, -1, group); err != nil {
		t.Skipf("chown to group %d: %v", group, err)
	}
	path := filepath.Join(dir, "hal.sock")
	s, err := Serve(h, path, Options{Group: strconv.Itoa(group)})
	require.NoError(t, err)
	defer s.Close()

	cred := rttest.Nobody
	cred.Groups = []uint32{group}
	out, err := rttest.ChildAs(t, cred, "dial", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "answer: <nil>\n", string(out))
	_, err = h.GetS("intruder")
	assert.NoError(t, err, "the group member's newsig ran")

	cred.Groups = []uint32{group + 1}
	out, err = rttest.ChildAs(t, cred, "dial", path).CombinedOutput()
	assert.Contains(t, string(out), "permission denied", "%v", err)
}

// Issue 37, 6: a burst of 150 connections against a host with three
// descriptors to spare makes its accept fail with EMFILE; the host backs
// off and keeps serving, so a connection after the burst is answered.
// Before, the accept loop ended on its first error and the later
// connection waited for ever (here: until its 60 s deadline).
func TestAcceptSurvivesEMFILE(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hal.sock")
	child(t, rttest.Child("lowfd", path))
	var burst []net.Conn
	for range 150 {
		c, err := net.Dial("unix", path)
		require.NoError(t, err)
		burst = append(burst, c)
	}
	for _, c := range burst {
		c.Close()
	}
	c, err := Dial(path)
	require.NoError(t, err)
	defer c.Close()
	// Not a time limit on the host: a guard that turns a hang into a failure.
	require.NoError(t, c.c.(net.Conn).SetDeadline(time.Now().Add(time.Minute)))
	_, err = c.Do(halfile.Command{Verb: "newsig", Args: []string{"after-burst", "bit"}})
	require.NoError(t, err, "the host serves after running out of descriptors")
}

// A host run by a service user (uid 65534 here) in its own directory of
// the host's group, as docs/DEPLOY.md deploys it, is reached by a client
// told that group (halcmd -group) or that user, as its segments are;
// without either it is refused. A directory its group may write is
// refused even so: a member could plant a socket there. Before, no
// client but root's or the service user's own could reach such a host.
func TestDialTrustsTheHostsGroupAsSegmentsDo(t *testing.T) {
	rttest.RequireRoot(t, "runs a host as another user")
	base, err := os.MkdirTemp("", "gortapi-svc-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	dir := filepath.Join(base, "gortapi")
	require.NoError(t, os.Mkdir(dir, 0o750))
	require.NoError(t, os.Chown(dir, int(rttest.Nobody.Uid), int(rttest.Nobody.Gid)))
	path := filepath.Join(dir, "hal.sock")
	child(t, rttest.ChildAs(t, rttest.Nobody, "host", path))

	_, err = Dial(path)
	require.Error(t, err, "a host of another user, no trust given")
	assert.ErrorIs(t, err, os.ErrPermission)

	group := Options{Group: strconv.Itoa(int(rttest.Nobody.Gid))}
	for _, o := range []Options{group, {AllowUIDs: []int{int(rttest.Nobody.Uid)}}} {
		c, err := DialTrusting(path, o)
		require.NoError(t, err, "%+v", o)
		_, err = c.Do(halfile.Command{Verb: "newsig", Args: []string{"s", "bit"}})
		c.Close()
		// The host accepts root; "exists" on the second round is an answer too.
		if err != nil {
			assert.Contains(t, err.Error(), "exists")
		}
	}

	require.NoError(t, os.Chmod(dir, 0o770))
	_, err = DialTrusting(path, group)
	require.Error(t, err, "a group-writable directory")
	assert.ErrorIs(t, err, os.ErrPermission)
	assert.Contains(t, err.Error(), "writable by its group")

	_, err = DialTrusting(path, Options{Group: "no-such-group-gortapi"})
	assert.ErrorIs(t, err, errs.Invalid)
}
