//go:build linux

package halctl

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	_ "github.com/gortapi/gortapi/rtapi/sim" // registers the sim flavor
)

// newHost makes a HAL on the sim flavor with a component c (pins c.out,
// c.in); closeHost closes it.
func newHost() (h *hal.HAL, closeHost func(), err error) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	if err != nil {
		return nil, nil, err
	}
	if h, err = hal.New(rt, hal.Options{}); err != nil {
		return nil, nil, errors.Join(err, rt.Close())
	}
	closeHost = func() { _ = h.Close(); _ = rt.Close() }
	c, err := h.NewComponent("c")
	if err == nil {
		c.Float("c.out", hal.Out)
		c.Float("c.in", hal.In)
		err = c.Ready()
	}
	if err != nil {
		closeHost()
		return nil, nil, err
	}
	return h, closeHost, nil
}

func host(t *testing.T) (*hal.HAL, string) {
	h, closeHost, err := newHost()
	require.NoError(t, err)
	t.Cleanup(closeHost)
	return h, filepath.Join(t.TempDir(), "hal.sock")
}

func do(t *testing.T, c *Client, words ...string) (string, error) {
	cmd, err := halfile.ParseArgs(words)
	require.NoError(t, err)
	return c.Do(cmd)
}

func TestServeRunsCommands(t *testing.T) {
	h, path := host(t)
	s, err := Serve(h, path, Options{})
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	_, err = Serve(h, path, Options{})
	assert.ErrorIs(t, err, os.ErrExist, "one host per socket")

	c, err := Dial(path)
	require.NoError(t, err)
	defer c.Close()
	_, err = do(t, c, "net", "x", "c.out", "=>", "c.in")
	require.NoError(t, err)
	out, err := do(t, c, "gets", "x")
	require.NoError(t, err)
	assert.Equal(t, "0\n", out)
	_, err = do(t, c, "net", "y", "c.in")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.Contains(t, err.Error(), `hal: net: pin "c.in" is linked to signal "x"`)
	out, err = do(t, c, "save")
	require.NoError(t, err)
	assert.Contains(t, out, "net x c.out c.in\n")
	_, err = do(t, c, "sets", "multi\nline", "1")
	assert.ErrorIs(t, err, rtapi.ErrInvalid, "a newline cannot smuggle a second command")

	require.NoError(t, s.Close())
	_, err = os.Stat(path)
	assert.True(t, os.IsNotExist(err), "Close removes the socket")
	_, err = do(t, c, "gets", "x")
	assert.Error(t, err, "connections end with the server")
}

func TestStaleSocketReplacedAndLongLineRefused(t *testing.T) {
	h, path := host(t)
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	_, err := Serve(h, path, Options{})
	assert.ErrorIs(t, err, os.ErrExist, "a plain file is not taken for a stale socket")
	require.NoError(t, os.Remove(path))

	s, err := Serve(h, path, Options{})
	require.NoError(t, err)
	s.ln.SetUnlinkOnClose(false)
	s.ln.Close() // as if the host died: the file stays
	s.wg.Wait()
	s2, err := Serve(h, path, Options{})
	require.NoError(t, err, "a dead host's socket is replaced")
	defer s2.Close()

	c, err := Dial(path)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Do(halfile.Command{Verb: "sets", Args: []string{"x", strings.Repeat("1", halfile.MaxLineLen+1)}})
	assert.ErrorContains(t, err, "command longer than")
}

// The one who-may rule: the host's user, root, or a member of its group by
// the primary or a supplementary group, the users who may read its 0640
// segments. Issue 38, 3: a user in Options.AllowUIDs, who may not read
// the segments, may not command the host either; before, it was let in.
func TestPermitted(t *testing.T) {
	t.Parallel()
	const host, other = 1000, 31337
	for _, tc := range []struct {
		gid         int
		uid, pgid   uint32
		groups      []uint32
		mayCommand  bool
		description string
	}{
		{-1, host, 1, nil, true, "the host's user"},
		{-1, 0, 1, nil, true, "root"},
		{4242, other, 4242, nil, true, "a member by its primary group"},
		{4242, other, 1, []uint32{7, 4242}, true, "a member by a supplementary group"},
		{4242, other, 1, nil, false, "no member"},
		{4242, other, 1, []uint32{7, 4243}, false, "other groups"},
		{-1, other, 4242, []uint32{4242}, false, "no group given"},
		{-1, 1001, 1, nil, false, "an AllowUIDs user (the segments are not its)"},
	} {
		assert.Equal(t, tc.mayCommand, mayCommand(host, tc.gid, tc.uid, tc.pgid, tc.groups), tc.description)
	}
}

// The socket directory: only its owner (the host's user or root) may
// write it, and it is no symlink.
func TestDistrustDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode os.FileMode
		uid  int
		want string
	}{
		{os.ModeDir | 0o700, 1000, ""},
		{os.ModeDir | 0o750, 1000, ""},
		{os.ModeDir | 0o755, 0, ""},
		{os.ModeDir | os.ModeSticky | 0o777, 0, "every user may write"},
		{os.ModeDir | 0o770, 1000, "writable by its group"},
		{os.ModeDir | 0o700, 65534, "owned by uid 65534"},
		{os.ModeSymlink | 0o777, 1000, "a symlink, not a directory"},
	} {
		got := distrustDir(tc.mode, tc.uid, 1000)
		if tc.want == "" {
			assert.Empty(t, got, "%v", tc.mode)
		} else {
			assert.Contains(t, got, tc.want, "%v", tc.mode)
		}
	}
}

// A symlink planted at the socket's name, or at its directory's, is
// refused by Serve and by Dial, never followed.
func TestSymlinksRefused(t *testing.T) {
	h, path := host(t)
	target := filepath.Join(t.TempDir(), "elsewhere.sock")
	require.NoError(t, os.Symlink(target, path))
	_, err := Serve(h, path, Options{})
	assert.ErrorIs(t, err, os.ErrExist)
	assert.ErrorContains(t, err, "a symlink")
	_, err = Dial(path)
	assert.ErrorIs(t, err, os.ErrPermission)
	assert.NoFileExists(t, target)

	link := filepath.Join(t.TempDir(), "dir")
	require.NoError(t, os.Symlink(filepath.Dir(target), link))
	_, err = Serve(h, filepath.Join(link, "hal.sock"), Options{})
	assert.ErrorIs(t, err, os.ErrPermission)
	assert.ErrorContains(t, err, "a symlink, not a directory")
	assert.NoFileExists(t, filepath.Join(filepath.Dir(target), "hal.sock"))
}

// Issue 37, 1: a host's output reaches the terminal only with its control
// bytes escaped (C0 but newline and tab, DEL, C1 as a byte or as U+0080 to
// U+009F); printable UTF-8 passes. Before, the escape sequences of a fake
// host went to the terminal as they were.
func TestReplyControlBytesEscaped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hal.sock")
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	defer ln.Close()
	go fakeHost(ln)
	c, err := Dial(path)
	require.NoError(t, err)
	defer c.Close()
	out, err := c.Do(halfile.Command{Verb: "stop"})
	require.NoError(t, err)
	assert.Equal(t, `\x1b]0;owned\x07\x1b[2Jstop done\x9b31m\u009b1m\x7f`+"\n", out)
	for _, b := range []byte{0x1b, 0x07, 0x7f, 0x9b} {
		assert.NotContains(t, out, string([]byte{b}))
	}
	assert.NotContains(t, out, "\u009b")

	for in, want := range map[string]string{
		"pid.0.Pgain\t50\n":       "pid.0.Pgain\t50\n",
		"vitesse-é-€-ۛ\n":         "vitesse-é-€-ۛ\n",
		"a\x00b\rc\x9bd\xffe\x85": `a\x00b\x0dc\x9bd\xffe\x85`,
	} {
		assert.Equal(t, want, escapeControl(in), "%q", in)
	}
}

// A leftover socket of a host that ended is reported as such (no host,
// os.ErrNotExist) by the client, not as a bare "connection refused".
func TestDialStaleSocket(t *testing.T) {
	h, path := host(t)
	s, err := Serve(h, path, Options{})
	require.NoError(t, err)
	s.ln.SetUnlinkOnClose(false)
	require.NoError(t, s.Close()) // as if the host died: the file stays
	_, err = Dial(path)
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "is left over")
}

// The default socket lies in a directory only its user (or root) may
// write, never /dev/shm, where every user may plant one.
func TestDefaultSocketDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		euid int
		xdg  string
		want string
	}{
		{0, "/run/user/0", "/run/gortapi"},
		{0, "", "/run/gortapi"},
		{1000, "/run/user/1000", "/run/user/1000/gortapi"},
		{1000, "", "/tmp/gortapi-1000"},
		{1000, "relative", "/tmp/gortapi-1000"},
	} {
		assert.Equal(t, tc.want, defaultDir(tc.euid, tc.xdg), "%+v", tc)
	}
	assert.NotEqual(t, "/dev/shm", filepath.Dir(SocketPath("", 3)))
	assert.Equal(t, "/x/gortapi-3-hal.sock", SocketPath("/x", 3))
}

// Issue 37, 6: at most MaxConns control connections are served at once;
// the next is refused at once with ErrBusy's answer, and one that closes
// makes room. Before, every connection got a goroutine and a descriptor.
func TestConnectionLimit(t *testing.T) {
	h, path := host(t)
	s, err := Serve(h, path, Options{})
	require.NoError(t, err)
	defer s.Close()
	var held []*Client
	for range MaxConns {
		c, err := Dial(path)
		require.NoError(t, err)
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	c, err := Dial(path)
	require.NoError(t, err)
	_, err = do(t, c, "gets", "x")
	c.Close()
	require.Error(t, err)
	assert.ErrorIs(t, err, rtapi.ErrBusy)
	assert.Contains(t, err.Error(), fmt.Sprint(MaxConns))

	held[0].Close()
	rttest.WaitFor(t, "a slot to free", func() bool {
		c, err := Dial(path)
		if err != nil {
			return false
		}
		defer c.Close()
		_, err = do(t, c, "newsig", "x", "float")
		return err == nil
	})
}

// The host writes no file a client names: "save KIND FILE" is refused
// over the socket (halcmd writes FILE from "save KIND"), and no file is
// made; "save comp" answers. Before, save took no KIND.
func TestServeRefusesSaveToAFile(t *testing.T) {
	h, path := host(t)
	s, err := Serve(h, path, Options{})
	require.NoError(t, err)
	defer s.Close()
	c, err := Dial(path)
	require.NoError(t, err)
	defer c.Close()
	file := filepath.Join(t.TempDir(), "owned-by-the-host.hal")
	_, err = do(t, c, "save", "all", file)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.Contains(t, err.Error(), "save FILE is written by halcmd")
	_, err = os.Stat(file)
	assert.True(t, os.IsNotExist(err), "no file made")
	out, err := do(t, c, "save", "comp")
	require.NoError(t, err)
	assert.Equal(t, "# components\n#loadrt c  (not loaded by loadrt, no args saved)\n", out)
}

// A request that begins with "-s " (DoScript) runs as halcmd -s: show
// prints LinuxCNC's scriptmode format, other requests on the same
// connection print as before; the prefix counts toward the line limit,
// and a user-component request with it is refused (and not run).
// Before, "-s show pin" was an unknown command.
func TestServeScriptMode(t *testing.T) {
	h, path := host(t)
	s, err := Serve(h, path, Options{})
	require.NoError(t, err)
	defer s.Close()
	c, err := Dial(path)
	require.NoError(t, err)
	defer c.Close()
	out, err := c.DoScript(halfile.Command{Verb: "show", Args: []string{"pin", "c.out"}})
	require.NoError(t, err)
	assert.Equal(t, "c float OUT 0 c.out\n\n", out)
	out, err = do(t, c, "show", "pin", "c.out")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "Component Pins:\n"), out)

	_, err = c.DoScript(halfile.Command{Verb: "newcomp", Args: []string{"panel"}})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	out, err = do(t, c, "list", "comp")
	require.NoError(t, err)
	assert.NotContains(t, out, "panel", "the refused request made nothing")

	long := strings.Repeat("x", halfile.MaxLineLen-len("show pin ")-1)
	_, err = do(t, c, "show", "pin", long)
	require.NoError(t, err, "fits without the prefix")
	_, err = c.DoScript(halfile.Command{Verb: "show", Args: []string{"pin", long}})
	require.ErrorIs(t, err, rtapi.ErrInvalid, "the prefix counts toward MaxLineLen")
}
