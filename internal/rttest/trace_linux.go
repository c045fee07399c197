//go:build linux

package rttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TracefsDir is where TraceInstance finds or mounts tracefs.
const TracefsDir = "/sys/kernel/tracing"

// TraceInstance returns the directory of a private tracefs instance,
// removed when t ends, mounting tracefs if needed (and unmounting it
// after). It skips t, loudly, without root or tracefs instances (fails
// with RequireEnv=1).
func TraceInstance(t testing.TB) string {
	t.Helper()
	RequireRoot(t, "creates a tracefs trace instance")
	skip := func(why string) {
		t.Helper()
		msg := "needs tracefs: " + why
		if os.Getenv(RequireEnv) == "1" {
			t.Fatal(msg + " (" + RequireEnv + "=1)")
		}
		noteSkip("tracefs")
		t.Skip(msg)
	}
	if _, err := os.Stat(filepath.Join(TracefsDir, "instances")); err != nil {
		if err := unix.Mount("nodev", TracefsDir, "tracefs", 0, ""); err != nil {
			skip(fmt.Sprintf("mount -t tracefs nodev %s: %v", TracefsDir, err))
		}
		t.Cleanup(func() { _ = unix.Unmount(TracefsDir, 0) })
		if _, err := os.Stat(filepath.Join(TracefsDir, "instances")); err != nil {
			skip(fmt.Sprintf("no trace instances under %s: %v", TracefsDir, err))
		}
	}
	name := strings.NewReplacer("/", "-", " ", "-").Replace(fmt.Sprintf("gortapi-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	dir := filepath.Join(TracefsDir, "instances", name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		skip(fmt.Sprintf("create trace instance: %v", err))
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove trace instance %s: %v", dir, err)
		}
	})
	return dir
}
