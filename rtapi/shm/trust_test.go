//go:build linux

package shm

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// nobody is the unprivileged user the ownership tests run a child as.
const nobody = 65534

// childAs re-executes this test binary as uid/gid to run one helper test:
// a real second user (rttest.ChildAs).
func childAs(t *testing.T, uid, gid int, test, role string, extra ...string) *exec.Cmd {
	t.Helper()
	cred := syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return withTestEnv(rttest.ChildAs(t, cred, role, "-test.run=^"+test+"$", "-test.count=1"), extra)
}

// runChild runs cmd and fails the test with its output when it fails.
func runChild(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Stderr = nil
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)
}

// childMain runs the child's side of the ownership tests, which the parent
// describes in the environment: create a segment with a mode and a group,
// or attach one, as the user the child runs as.
func childMain() {
	o := devShm()
	o.Group = os.Getenv("SHM_TEST_GROUP")
	key64, _ := strconv.ParseUint(os.Getenv("SHM_TEST_KEY"), 10, 32)
	key := uint32(key64)
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	switch rttest.ChildRole() {
	case "plant": // what an attacker would do: a valid segment, mode 0666
		mode, _ := strconv.ParseUint(os.Getenv("SHM_TEST_MODE"), 8, 32)
		if err := os.WriteFile(o.Path(key), validHeader(key, 4096), 0o600); err != nil {
			fail(err)
		}
		if err := os.Chmod(o.Path(key), os.FileMode(mode)); err != nil {
			fail(err)
		}
	case "create":
		s, err := New(o, key, 4096)
		if err != nil {
			fail(err)
		}
		s.Bytes()[0] = 42
		if err := s.Close(); err != nil {
			fail(err)
		}
	case "attach-ro": // a viewer with read permission only
		o.ReadOnly = true
		s, err := Attach(o, key)
		if err != nil {
			fail(err)
		}
		if s.Bytes()[0] != 7 {
			fail(errors.New("did not see the parent's write"))
		}
		if err := s.Close(); err != nil {
			fail(err)
		}
	case "attach":
		s, err := Attach(o, key)
		if err != nil {
			fail(err)
		}
		if s.Bytes()[0] != 7 {
			fail(errors.New("did not see the parent's write"))
		}
		if err := s.Close(); err != nil {
			fail(err)
		}
	}
	os.Exit(0)
}

func TestOwnershipChild(t *testing.T) {
	if rttest.ChildRole() != "" {
		childMain()
	}
	t.Skip("helper process for the ownership tests")
}

func plantAs(t *testing.T, key uint32, mode os.FileMode) {
	t.Helper()
	runChild(t, childAs(t, nobody, nobody, "TestOwnershipChild", "plant",
		"SHM_TEST_KEY="+strconv.Itoa(int(key)), fmt.Sprintf("SHM_TEST_MODE=%o", mode)))
	t.Cleanup(func() { _ = os.Remove(devShm().Path(key)) })
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(devShm().Path(key), &st))
	require.Equal(t, uint32(nobody), st.Uid, "the child really ran as another user")
}

// A segment planted by another user at the key a root host then opens is
// refused, with an error that names owner, mode and the remedy. Before,
// New attached it silently (Created false) and the planter could read and
// write what root wrote.
func TestForeignSegmentRefused(t *testing.T) {
	const key = 50
	plantAs(t, key, 0o666)
	for name, open := range map[string]func() (*Segment, error){
		"New":    func() (*Segment, error) { return New(devShm(), key, 4096) },
		"Attach": func() (*Segment, error) { return Attach(devShm(), key) },
	} {
		s, err := open()
		require.Error(t, err, name)
		assert.Nil(t, s)
		assert.ErrorIs(t, err, ErrUntrusted)
		assert.ErrorIs(t, err, os.ErrPermission)
		var oe *OwnerError
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, nobody, oe.UID)
		assert.Equal(t, os.FileMode(0o666), oe.Mode.Perm())
		for _, want := range []string{"writable by every user", "owner uid 65534", "mode 0666", "rm " + devShm().Path(key)} {
			assert.Contains(t, err.Error(), want, name)
		}
	}
	// Even a user named in AllowUIDs may not leave it writable by all.
	o := devShm()
	o.AllowUIDs = []int{nobody}
	_, err := Attach(o, key)
	assert.ErrorIs(t, err, ErrUntrusted)
}

func TestForeignOwnerRefusedUnlessAllowed(t *testing.T) {
	const key = 51
	plantAs(t, key, 0o600)
	_, err := Attach(devShm(), key)
	require.ErrorIs(t, err, ErrUntrusted)
	assert.Contains(t, err.Error(), "owned by uid 65534")
	o := devShm()
	o.AllowUIDs = []int{nobody}
	s, err := Attach(o, key)
	require.NoError(t, err, "an allowed user's 0600 segment is attached")
	require.NoError(t, s.Close())
}

// A group share in both directions, with a real unprivileged user: root
// creates for the group and the member attaches; the member creates and
// root attaches only when it names the group.
func TestGroupShare(t *testing.T) {
	group := strconv.Itoa(nobody)
	o := devShm()
	o.Group = group
	old := syscall.Umask(0o077) // the umask must not take the group's write bit
	s, err := New(o, 52, 4096)
	syscall.Umask(old)
	require.NoError(t, err)
	defer s.Delete()
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(s.Path(), &st))
	assert.Equal(t, uint32(0o660), st.Mode&0o777)
	assert.Equal(t, uint32(nobody), st.Gid)
	s.Bytes()[0] = 7
	runChild(t, childAs(t, nobody, nobody, "TestOwnershipChild", "attach", "SHM_TEST_KEY=52", "SHM_TEST_GROUP="+group))

	runChild(t, childAs(t, nobody, nobody, "TestOwnershipChild", "create", "SHM_TEST_KEY=53", "SHM_TEST_GROUP="+group))
	t.Cleanup(func() { _ = os.Remove(devShm().Path(53)) })
	_, err = Attach(devShm(), 53)
	require.ErrorIs(t, err, ErrUntrusted, "without Group, the member's segment is not trusted")
	assert.Contains(t, err.Error(), "writable by group 65534")
	m, err := Attach(o, 53)
	require.NoError(t, err)
	assert.Equal(t, byte(42), m.Bytes()[0])
	require.NoError(t, m.Delete())
}

// A 0640 segment of a group is read by a member through a read-only
// attachment, while a read-write attach by the member is refused by the
// kernel and a user outside the group cannot attach at all. Before, Attach
// always opened read-write: a viewer had to be a trusted writer.
func TestGroupReadOnlyShare(t *testing.T) {
	group := strconv.Itoa(nobody)
	o := devShm()
	o.Group, o.Mode = group, 0o640
	s, err := New(o, 54, 4096)
	require.NoError(t, err)
	defer s.Delete()
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(s.Path(), &st))
	assert.Equal(t, uint32(0o640), st.Mode&0o777)
	s.Bytes()[0] = 7
	runChild(t, childAs(t, nobody, nobody, "TestOwnershipChild", "attach-ro", "SHM_TEST_KEY=54", "SHM_TEST_GROUP="+group))

	cmd := childAs(t, nobody, nobody, "TestOwnershipChild", "attach", "SHM_TEST_KEY=54", "SHM_TEST_GROUP="+group)
	cmd.Stdout, cmd.Stderr = nil, nil
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "a read-write attach by a reader: %s", out)
	assert.Contains(t, string(out), "permission denied")

	cmd = childAs(t, nobody, nobody+1, "TestOwnershipChild", "attach-ro", "SHM_TEST_KEY=54", "SHM_TEST_GROUP="+group)
	cmd.Stdout, cmd.Stderr = nil, nil
	out, err = cmd.CombinedOutput()
	require.Error(t, err, "a user outside the group: %s", out)
	assert.Contains(t, string(out), "permission denied")
}

func TestNotRegularFileRefused(t *testing.T) {
	o := devShm()
	require.NoError(t, syscall.Mkfifo(o.Path(54), 0o600))
	defer os.Remove(o.Path(54))
	_, err := Attach(o, 54)
	require.ErrorIs(t, err, ErrUntrusted)
	assert.Contains(t, err.Error(), "not a regular file")
}

func TestTrustOptionsMisuse(t *testing.T) {
	for name, o := range map[string]Options{
		"mode writable by all":        {Mode: 0o666},
		"group write without a group": {Mode: 0o660},
		"unknown group":               {Group: "no-such-group-gortapi"},
		"negative gid":                {Group: "-5"},
		"negative allowed uid":        {AllowUIDs: []int{-1}},
		"not a permission":            {Mode: os.ModeSetuid | 0o600},
	} {
		o.Dir, o.Instance = t.TempDir(), testInstance
		_, err := New(o, 55, 64)
		assert.ErrorIs(t, err, ErrInvalid, name)
		_, err = Attach(o, 55)
		assert.ErrorIs(t, err, ErrInvalid, name)
	}
}

func TestDistrust(t *testing.T) {
	o := Options{AllowUIDs: []int{1000}, gid: 100}
	none := Options{gid: -1}
	cases := []struct {
		o          Options
		uid, gid   int
		mode       os.FileMode
		euid       int
		untrusted  bool
		reasonPart string
	}{
		{none, 500, 500, 0o600, 500, false, ""},
		{none, 0, 0, 0o600, 500, false, ""},
		{none, 501, 500, 0o600, 500, true, "owned by uid 501"},
		{none, 500, 500, 0o602, 500, true, "every user"},
		{none, 500, 500, 0o620, 500, true, "group 500"},
		{none, 500, 500, 0o644, 500, false, ""},
		{o, 1000, 5, 0o600, 500, false, ""},
		{o, 1001, 100, 0o660, 500, false, ""},
		{o, 1001, 101, 0o600, 500, true, "owned by uid 1001"},
		{o, 500, 101, 0o660, 500, true, "group 101"},
		{o, 500, 500, os.ModeNamedPipe | 0o600, 500, true, "not a regular file"},
	}
	for i, c := range cases {
		why := c.o.distrust(c.uid, c.gid, c.mode, c.euid)
		assert.Equal(t, c.untrusted, why != "", "case %d: %q", i, why)
		assert.Contains(t, why, c.reasonPart, "case %d", i)
	}
}
