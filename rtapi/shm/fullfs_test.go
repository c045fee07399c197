//go:build linux

package shm

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
)

// fullFSChild runs in a private mount namespace with a 256 KiB tmpfs on
// SHM_TEST_DIR: it fills the tmpfs, as any local user can fill /dev/shm,
// then creates segments there. Each must fail with ENOSPC; before the fix
// the first store into the sparse file killed the process with SIGBUS.
func fullFSChild() {
	dir := os.Getenv("SHM_TEST_DIR")
	if err := unix.Mount("gortapi-test", dir, "tmpfs", 0, "size=256k"); err != nil {
		fmt.Fprintln(os.Stderr, "mount tmpfs:", err)
		os.Exit(3)
	}
	f, err := os.Create(dir + "/filler")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			break // ENOSPC: the filesystem is full
		}
	}
	f.Close()
	for _, o := range []Options{{Dir: dir}, {Dir: dir, Lock: true}, {Dir: dir, Prefault: true}} {
		s, err := New(o, 1, 64<<10)
		if err == nil {
			s.Delete()
			fmt.Fprintln(os.Stderr, "New on a full filesystem succeeded")
			os.Exit(2)
		}
		if !errors.Is(err, syscall.ENOSPC) {
			fmt.Fprintln(os.Stderr, "New on a full filesystem:", err, "(want ENOSPC)")
			os.Exit(2)
		}
		if _, serr := os.Stat(o.Path(1)); !os.IsNotExist(serr) {
			fmt.Fprintln(os.Stderr, "failed New left its file behind:", serr)
			os.Exit(2)
		}
		fmt.Println("ok:", err)
	}
	os.Exit(0)
}

// A full /dev/shm (which any local user can fill) gives ENOSPC from New,
// not a SIGBUS on the first store into the segment. The full filesystem is
// a private tmpfs in a mount namespace of a child process, never the real
// /dev/shm.
func TestNewOnFullFilesystem(t *testing.T) {
	if rttest.ChildRole() == "fullfs" {
		fullFSChild()
	}
	rttest.RequireRoot(t, "mounts a private tmpfs in a new mount namespace (unshare -m)")
	cmd := child(t, "TestNewOnFullFilesystem", "fullfs", "SHM_TEST_DIR="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	cmd.Stderr = nil
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.EPERM) || strings.Contains(string(out), "mount tmpfs:") {
		t.Skipf("cannot mount a private tmpfs in a new mount namespace here (%v: %s); needs CAP_SYS_ADMIN", err, out)
	}
	require.NoError(t, err, "child: %s", out)
	require.Equal(t, 3, strings.Count(string(out), "ok:"), "child: %s", out)
}
