// Package rttest holds test helpers shared by gortapi's packages.
package rttest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
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
	noteSkip("SCHED_FIFO (run as root or setcap cap_sys_nice+ep)")
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
	noteSkip("root")
	t.Skip(msg)
}

// RequireTool returns the path of the program name, or skips t, loudly,
// saying how to install it (install: "apt-get install rt-tests"); with
// GORTAPI_REQUIRE_RT=1 (CI installs every tool) it fails instead.
func RequireTool(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("needs %s: %s (.ci/run does)", name, install)
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg + " (" + RequireEnv + "=1)")
	}
	noteSkip(name + " (" + install + ")")
	t.Skip(msg)
	return ""
}

// skipped counts the tests the Require helpers skipped, by what they
// lacked.
var skipped struct {
	sync.Mutex
	by map[string]int
}

func noteSkip(lacked string) {
	skipped.Lock()
	defer skipped.Unlock()
	if skipped.by == nil {
		skipped.by = map[string]int{}
	}
	skipped.by[lacked]++
}

// SkipSummary is one line counting the tests this test binary skipped
// for want of privileges or tools, and what they lacked; "" when none
// was skipped.
func SkipSummary() string {
	skipped.Lock()
	defer skipped.Unlock()
	n := 0
	var what []string
	for lacked, c := range skipped.by {
		n += c
		what = append(what, fmt.Sprintf("%d for %s", c, lacked))
	}
	if n == 0 {
		return ""
	}
	sort.Strings(what)
	plural := "s"
	if n == 1 {
		plural = ""
	}
	return fmt.Sprintf("%s: %d test%s SKIPPED: %s; go test -v shows which, %s=1 makes them fail",
		filepath.Base(os.Args[0]), n, plural, strings.Join(what, ", "), RequireEnv)
}

// Main runs the tests (call it from TestMain: os.Exit(rttest.Main(m)))
// and then prints SkipSummary where a person sees it: go test shows a
// passing package's output only with -v, so the line goes to the
// terminal (/dev/tty) when there is one, else to stderr (shown with -v or
// when the package fails).
func Main(m *testing.M) int {
	code := m.Run()
	if line := SkipSummary(); line != "" {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			fmt.Fprintln(tty, line)
			tty.Close()
		} else {
			fmt.Fprintln(os.Stderr, line)
		}
	}
	return code
}
