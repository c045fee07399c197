//go:build linux

package halctl

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

func req(c *Client, words ...string) (string, error) {
	return c.Do(halfile.Command{Verb: words[0], Args: words[1:]})
}

// Issue 38, 4 (the base of issue 40's loadusr): a connection makes a
// user-space component in the host (newcomp, newpin, newparam, ready),
// writes its OUT pin (setown) as its own code would, and a halcmd wires
// it; another connection cannot write it; when the connection ends the
// component and its pins are gone, their signal stays and the host runs
// on. Before, the socket knew no such request ("unknown command").
func TestUserComponentOverTheSocket(t *testing.T) {
	h, path := host(t)
	s, err := Serve(h, path, Options{})
	require.NoError(t, err)
	defer s.Close()
	user, err := Dial(path)
	require.NoError(t, err)
	for _, r := range [][]string{
		{"newcomp", "panel"},
		{"newpin", "panel", "panel.jog", "float", "out"},
		{"newpin", "panel", "panel.pos", "float", "in"},
		{"newparam", "panel", "panel.scale", "float", "rw"},
		{"ready", "panel"},
	} {
		_, err := req(user, r...)
		require.NoError(t, err, "%v", r)
	}
	halcmd, err := Dial(path)
	require.NoError(t, err)
	defer halcmd.Close()
	_, err = do(t, halcmd, "net", "jog", "panel.jog", "=>", "c.in")
	require.NoError(t, err)
	_, err = req(user, "setown", "panel.jog", "2.5")
	require.NoError(t, err)
	out, err := do(t, halcmd, "getp", "c.in")
	require.NoError(t, err)
	assert.Equal(t, "2.5\n", out, "the user component's OUT pin drives the signal")
	out, err = do(t, halcmd, "show", "comp", "panel")
	require.NoError(t, err)
	assert.Contains(t, out, "User  panel")
	assert.Contains(t, out, fmt.Sprintf("%5d ready", os.Getpid()))

	_, err = req(user, "setown", "panel.pos", "1")
	assert.ErrorContains(t, err, "is an IN pin")
	_, err = req(user, "newpin", "panel", "panel.late", "bit", "in")
	assert.ErrorIs(t, err, rtapi.ErrInvalid, "ready: no more pins (ErrState travels as an error)")
	_, err = req(halcmd, "setown", "panel.jog", "1")
	assert.ErrorContains(t, err, "no pin or parameter of a component this connection made")
	_, err = req(user, "newpin", "panel")
	assert.ErrorContains(t, err, "newpin takes 4 arguments, not 1")

	require.NoError(t, user.Close())
	require.Eventually(t, func() bool { _, err := h.GetP("panel.jog"); return err != nil }, time.Minute, time.Millisecond,
		"the connection's end removed the component")
	out, err = do(t, halcmd, "show", "sig", "jog")
	require.NoError(t, err)
	assert.Contains(t, out, "c.in", "the signal stays, with the host's pin")
	assert.NotContains(t, out, "panel.jog")
	_, err = req(halcmd, "newcomp", "panel")
	require.NoError(t, err, "the name is free again")
}

// A peer the host does not trust is refused its newcomp like any command.
func TestUserComponentOfUntrustedPeerRefused(t *testing.T) {
	h, _ := host(t)
	dir, err := os.MkdirTemp("", "gortapi-peer-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "hal.sock")
	s, err := Serve(h, path, Options{})
	require.NoError(t, err)
	defer s.Close()
	cmd := rttest.ChildAs(t, rttest.Nobody, "rawnewcomp", path)
	require.NoError(t, os.Chmod(dir, 0o777))
	require.NoError(t, os.Chmod(path, 0o666))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "may not command this host")
	_, err = h.NewComponent("intruder")
	assert.NoError(t, err, "no component of that name was made")
}

// Issue 40, 6: a user component writes several of its pins in one
// request, "setown A 1 B 2", in order; the first bad pair ends it, the
// pairs before it stay written. Before, setown took exactly one pair
// ("setown takes 2 arguments, not 4").
func TestUserComponentSetsPinsInOneRequest(t *testing.T) {
	h, path := host(t)
	s, err := Serve(h, path, Options{})
	require.NoError(t, err)
	defer s.Close()
	user, err := Dial(path)
	require.NoError(t, err)
	defer user.Close()
	for _, r := range [][]string{
		{"newcomp", "pad"},
		{"newpin", "pad", "pad.a", "float", "out"},
		{"newpin", "pad", "pad.b", "s32", "io"},
		{"newparam", "pad", "pad.k", "u32", "ro"},
		{"ready", "pad"},
	} {
		_, err := req(user, r...)
		require.NoError(t, err, "%v", r)
	}
	_, err = req(user, "setown", "pad.a", "1.5", "pad.b", "-3", "pad.k", "7")
	require.NoError(t, err)
	for name, want := range map[string]string{"pad.a": "1.5", "pad.b": "-3", "pad.k": "7"} {
		v, err := h.GetP(name)
		require.NoError(t, err)
		assert.Equal(t, want, fmt.Sprint(v), name)
	}
	_, err = req(user, "setown", "pad.a", "2", "pad.b", "x", "pad.k", "8")
	assert.ErrorIs(t, err, rtapi.ErrInvalid)
	v, _ := h.GetP("pad.a")
	assert.Equal(t, "2", fmt.Sprint(v), "the pair before the bad one stays written")
	v, _ = h.GetP("pad.k")
	assert.Equal(t, "7", fmt.Sprint(v), "the pairs after it are not")
	_, err = req(user, "setown", "pad.a", "1", "pad.b")
	assert.ErrorContains(t, err, "setown takes NAME VALUE pairs, not 3 arguments")
}
