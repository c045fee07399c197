//go:build linux

package control

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	_ "github.com/gortapi/gortapi/rtapi/sim" // registers the sim flavor
)

func host(t *testing.T) (*hal.HAL, string) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	c, _ := h.NewComponent("c")
	c.Float("c.out", hal.Out)
	c.Float("c.in", hal.In)
	require.NoError(t, c.Ready())
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

func TestPermitted(t *testing.T) {
	s := &Server{gid: 4242, allow: []int{1001}}
	me := uint32(os.Geteuid())
	assert.True(t, s.permitted(me, 1))
	assert.True(t, s.permitted(0, 1))
	assert.True(t, s.permitted(1001, 1))
	assert.True(t, s.permitted(31337, 4242), "a member of the group")
	if me != 31337 {
		assert.False(t, s.permitted(31337, 1))
	}
	s.gid = -1
	if me != 31337 {
		assert.False(t, s.permitted(31337, 4242))
	}
}
