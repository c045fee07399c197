//go:build linux

package control

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// TestMain doubles as the second process of TestPeerOfAnotherUserRefused:
// in the role "dial" it sends one command to the socket os.Args[1] and
// prints the answer.
func TestMain(m *testing.M) {
	if rttest.ChildRole() == "dial" {
		c, err := Dial(os.Args[1])
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(2)
		}
		_, err = c.Do(halfile.Command{Verb: "newsig", Args: []string{"intruder", "bit"}})
		fmt.Println("answer:", err)
		os.Exit(0)
	}
	os.Exit(rttest.Main(m))
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
	cmd := rttest.ChildAs(t, rttest.Nobody, "dial", path)
	require.NoError(t, os.Chmod(dir, 0o777))
	require.NoError(t, os.Chmod(path, 0o666))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "may not command this host")
	assert.Contains(t, string(out), fmt.Sprintf("uid %d", rttest.Nobody.Uid))
	_, err = h.GetS("intruder")
	assert.Error(t, err, "the refused command did not run")
}
