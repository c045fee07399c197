// Package rttest holds test helpers shared by gortapi's packages.
package rttest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gortapi/gortapi/internal/sys"
)

// RequireEnv is the environment variable that turns RequireRT's skips into
// failures. CI sets it: it runs as root, where every privileged test must
// run.
const RequireEnv = "GORTAPI_REQUIRE_RT"

// RequireRT skips t, loudly, unless this process may use SCHED_FIFO. With
// GORTAPI_REQUIRE_RT=1 it fails instead of skipping.
func RequireRT(t testing.TB) {
	t.Helper()
	err := sys.ProbeSchedFIFO()
	if err == nil {
		return
	}
	msg := "needs SCHED_FIFO (CAP_SYS_NICE or RLIMIT_RTPRIO > 0; run as root or setcap cap_sys_nice+ep): " + err.Error()
	if errors.Is(err, syscall.EPERM) && os.Geteuid() == 0 {
		msg += " (root, yet refused: RT group scheduling may leave this cgroup no RT budget)"
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// CleanShm removes the shared-memory segments of instance left in dir
// (normally /dev/shm) and reports them on stderr. It returns 1 when there
// were any, so that a TestMain can fail the run: a test that leaks a
// segment is a failing test.
func CleanShm(dir string, instance int) int {
	left, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("gortapi-%d-*", instance)))
	if len(left) == 0 {
		return 0
	}
	fmt.Fprintf(os.Stderr, "segments left in %s: %v\n", dir, left)
	for _, f := range left {
		_ = os.Remove(f)
	}
	return 1
}

// RequireRoot skips t, loudly, unless the process runs as root; with
// GORTAPI_REQUIRE_RT=1 (CI runs as root) it fails instead.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	msg := "needs root: " + why + "; run as root (CI does)"
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg + " (" + RequireEnv + "=1)")
	}
	t.Skip(msg)
}
