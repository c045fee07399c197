//go:build linux

package halctl

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// A bad Options.Group is rtapi.ErrInvalid, by the rule rtapi/shm's
// Options.Group follows (internal/group): no socket is made and no dial
// is tried. Before, "4294967296" passed as a gid that chown truncates
// to 0 (root's group), and "-5" went to user.LookupGroup.
func TestBadGroupRefused(t *testing.T) {
	h, path := host(t)
	for _, g := range []string{"-5", "4294967295", "4294967296", "99999999999999999999", "a\x00b", "no-such-group-gortapi"} {
		_, err := Serve(h, path, Options{Group: g})
		assert.ErrorIs(t, err, rtapi.ErrInvalid, "Serve, group %q", g)
		_, err = DialTrusting(filepath.Join(t.TempDir(), "x.sock"), Options{Group: g})
		assert.ErrorIs(t, err, rtapi.ErrInvalid, "DialTrusting, group %q", g)
	}
}

// Options.ShmGroup given to the RT (as -rtapi.shm-group or
// $RTAPI_SHM_GROUP resolve into it) is the group of the HAL's segments
// and of the control socket, unless hal.Options or Options name
// another. Before, halrun and halhost passed the unresolved flag value
// on: with the environment variable alone, the RT's segments were
// shared but the HAL's data segment stayed 0600 and the socket 0600.
func TestGroupFollowsTheRT(t *testing.T) {
	gid := os.Getgid()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", ShmGroup: strconv.Itoa(gid)})
	require.NoError(t, err)
	defer rt.Close()
	dir := t.TempDir()
	h, err := hal.New(rt, hal.Options{ShmDir: dir, DataKey: 0x47525001})
	require.NoError(t, err)
	defer h.Close()
	srv, err := Serve(h, filepath.Join(dir, "hal.sock"), Options{})
	require.NoError(t, err)
	defer srv.Close()
	for file, mode := range map[string]os.FileMode{
		shm.Options{Dir: dir, Instance: rt.Instance()}.Path(0x47525001): 0o640,
		srv.Path(): 0o660,
	} {
		var st unix.Stat_t
		require.NoError(t, unix.Stat(file, &st))
		assert.Equal(t, mode, os.FileMode(st.Mode).Perm(), file)
		assert.Equal(t, uint32(gid), st.Gid, file)
	}
}
