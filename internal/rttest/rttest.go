// Package rttest holds test helpers shared by gortapi's packages.
package rttest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/gortapi/gortapi/internal/sys"
)

// RequireEnv is the environment variable that turns RequireRT's skips into
// failures. CI sets it: it runs as root, where every privileged test must
// run.
const RequireEnv = "GORTAPI_REQUIRE_RT"

// SkipShort skips t under go test -short, the unit lane: no SCHED_FIFO,
// no root, no other programs (toolchains, renderers, kernels), whatever
// GORTAPI_REQUIRE_RT says. RequireRT, RequireRoot, RequireGo and
// RequireTool call it.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (the unit lane) runs no " + what + "; go test without -short does")
	}
}

// ParallelUnlessRT calls t.Parallel under go test -short, where Main has
// refused SCHED_FIFO to the process (its package's TestMain must call
// Main): a test that runs tasks in real time, with none of them
// real-time, may then share the CPUs with others. Without -short its
// tasks may be SCHED_FIFO, and two such tests at once on a small machine
// starve each other, so it runs alone.
func ParallelUnlessRT(t *testing.T) {
	t.Helper()
	if realTimeDenied.Load() {
		t.Parallel()
	}
}

// RequireRT skips t, loudly, unless this process may use SCHED_FIFO. With
// GORTAPI_REQUIRE_RT=1 it fails instead of skipping. Under -short it skips
// (SkipShort). A test it lets run holds the machine's real-time test lock
// (RTLockFile) until it ends, so that the SCHED_FIFO tests of packages
// that go test runs at once take turns.
func RequireRT(t testing.TB) {
	t.Helper()
	SkipShort(t, "SCHED_FIFO test")
	SkipIfEmulated(t, "the emulator, not the kernel's scheduler, decides when a real-time thread runs "+
		"(its own threads and locks stand between the task and SCHED_FIFO)")
	err := sys.ProbeSchedFIFO()
	if err == nil {
		holdRTLock(t)
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
// GORTAPI_REQUIRE_RT=1 (CI runs as root) it fails instead. Under -short
// it skips (SkipShort).
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	SkipShort(t, "test that needs root")
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

// ToolsEnv set to "absent" says that this machine lacks the tools on
// purpose (.ci/guest386.sh's guest has no Go toolchain and no Debian
// packages): RequireTool then skips even with GORTAPI_REQUIRE_RT=1.
const ToolsEnv = "GORTAPI_TOOLS"

// RequireTool returns the path of the program name, or skips t, loudly,
// saying how to install it (install: "apt-get install rt-tests"); with
// GORTAPI_REQUIRE_RT=1 (CI installs every tool) it fails instead, unless
// GORTAPI_TOOLS=absent. Under -short it skips (SkipShort): running
// another program is not a unit test.
func RequireTool(t testing.TB, name, install string) string {
	t.Helper()
	SkipShort(t, "test that runs "+name)
	return requireTool(t, name, install)
}

func requireTool(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("needs %s: %s (.ci/run does)", name, install)
	if os.Getenv(RequireEnv) == "1" && os.Getenv(ToolsEnv) != "absent" {
		t.Fatal(msg + " (" + RequireEnv + "=1)")
	}
	noteSkip(name + " (" + install + ")")
	t.Skip(msg)
	return ""
}

// RequireGo returns the path of the go command, or skips t as RequireTool
// does: tests that build a program or list the module need the toolchain,
// which .ci/guest386.sh's guest lacks. Under -short it skips
// (SkipShort): building a program is not a unit test.
func RequireGo(t testing.TB) string {
	t.Helper()
	SkipShort(t, "test that builds with the go command")
	return requireTool(t, "go", "install Go 1.26 or later")
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

// realTimeDenied says that Main called sys.DenyRealTime.
var realTimeDenied atomic.Bool

// Main runs the tests (call it from TestMain: os.Exit(rttest.Main(m))),
// removes what Program built, and prints SkipSummary where a person sees
// it: go test shows a passing package's output only with -v, so the line
// goes to the terminal (/dev/tty) when there is one, else to stderr
// (shown with -v or when the package fails).
//
// Under go test -short (the unit lane) it first makes SCHED_FIFO and
// SCHED_RR refused (sys.DenyRealTime): every test runs as an unprivileged
// user's would, with no real-time thread; and it runs up to 4×GOMAXPROCS
// parallel tests at once unless the command line sets -test.parallel.
func Main(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		sys.DenyRealTime()
		realTimeDenied.Store(true)
		widenParallel()
	}
	code := m.Run()
	removePrograms()
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

// widenParallel runs up to 4×GOMAXPROCS parallel tests at once instead of
// go test's GOMAXPROCS, unless the command line says -test.parallel. In
// the unit lane most parallel tests wait (for a task's periods, a child
// process, a deadline) rather than compute, and with as many at once as
// CPUs the CPUs idle while they wait.
func widenParallel() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// RequireLayout64 fails t unless every 64-bit field of typ (at any depth)
// lies at an 8-byte-aligned offset and typ itself is 8-byte aligned when it
// has such a field. Shared-memory layouts must pass it on every
// architecture: on 386 and arm Go aligns int64, uint64 and float64 to 4
// bytes, where 64-bit atomics panic ("unaligned 64-bit atomic operation")
// and where a 32-bit process would disagree with a 64-bit one about the
// layout. An atomic.Int64/Uint64 field, or a [0]atomic.Uint64 marker,
// carries the 8-byte alignment on 32-bit architectures too.
func RequireLayout64(t testing.TB, typ reflect.Type) {
	t.Helper()
	has64 := false
	var walk func(reflect.Type, uintptr, string)
	walk = func(ft reflect.Type, off uintptr, path string) {
		switch ft.Kind() {
		case reflect.Int64, reflect.Uint64, reflect.Float64:
			has64 = true
			if off%8 != 0 {
				t.Errorf("%s: %s %s at offset %d is not 8-byte aligned", typ, path, ft, off)
			}
		case reflect.Array:
			for i := range min(ft.Len(), 2) { // the first two show the stride
				walk(ft.Elem(), off+uintptr(i)*ft.Elem().Size(), fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Struct:
			for i := range ft.NumField() {
				f := ft.Field(i)
				walk(f.Type, off+f.Offset, path+"."+f.Name)
			}
		}
	}
	walk(typ, 0, "")
	if has64 && typ.Align() < 8 {
		t.Errorf("%s has 64-bit fields but is only %d-byte aligned on %s", typ, typ.Align(), runtime.GOARCH)
	}
}

// Emulator says which user-mode emulator runs this process ("" when the
// kernel runs it natively); see emulator_linux.go for the evidence.
var Emulator = sync.OnceValue(emulator)

// SkipIfEmulated skips t, with why and the evidence, when this process
// runs under a user-mode emulator (see Emulator). It is for tests that
// cannot work there for a stated reason, never for tests that fail there.
func SkipIfEmulated(t testing.TB, why string) {
	t.Helper()
	if e := Emulator(); e != "" {
		t.Skip("cannot run under " + e + ": " + why)
	}
}

// selfExec reports the error of executing this test binary again (with no
// test to run), nil when the kernel can run it.
var selfExec = sync.OnceValue(func() error {
	return exec.Command(os.Args[0], "-test.run=^$", "-test.count=1").Run()
})

// RequireSelfExec skips t, loudly, where a test cannot start a child
// process of itself: under a user-mode emulator, whose fork of a
// multithreaded guest can deadlock (a qemu-arm-static child of ipc.test
// slept in a futex, never reaching exec, until the package's timeout),
// and where the kernel cannot execute this test binary (ENOEXEC). Any
// other failure to start the child fails t.
func RequireSelfExec(t testing.TB) {
	t.Helper()
	SkipIfEmulated(t, "a child process: the emulator's fork of a multithreaded process can deadlock before exec")
	err := selfExec()
	if errors.Is(err, syscall.ENOEXEC) {
		t.Skip("cannot start a child process: the kernel cannot execute this test binary (" + err.Error() +
			"); it runs under a user-mode emulator without binfmt_misc")
	}
	if err != nil {
		t.Fatalf("re-execute the test binary: %v", err)
	}
}

// RTLockFile is the file whose flock RequireRT holds for a test's
// length. Without it, go test ./... runs two packages' SCHED_FIFO tests
// at once: a spin one pins to a CPU starves the other's threads there,
// guard and watchdog included, and both fail for reasons neither tests.
// A child process of a test (ChildEnv set) does not take it: its parent
// holds it.
var RTLockFile = filepath.Join(os.TempDir(), "gortapi-rt-tests.lock")

// rtLock is this process's hold on RTLockFile: the tests of one binary
// share it (a test and its subtests may each call RequireRT).
var rtLock struct {
	sync.Mutex
	f     *os.File
	holds int
}

// holdRTLock takes RTLockFile for t's length, waiting for the process
// that holds it. A lock file it cannot open is reported and not waited
// for.
func holdRTLock(t testing.TB) {
	if ChildRole() != "" {
		return
	}
	rtLock.Lock()
	defer rtLock.Unlock()
	if rtLock.holds == 0 {
		f, err := lockFile(RTLockFile)
		if err != nil {
			t.Logf("running without the real-time test lock: %v", err)
			return
		}
		rtLock.f = f
	}
	rtLock.holds++
	t.Cleanup(func() {
		rtLock.Lock()
		defer rtLock.Unlock()
		if rtLock.holds--; rtLock.holds == 0 {
			rtLock.f.Close() // closing the last descriptor drops the lock
			rtLock.f = nil
		}
	})
}

// lockFile opens name, making it if it is missing, and waits for an
// exclusive flock on it.
func lockFile(name string) (*os.File, error) {
	f, err := os.Open(name) // another user's file in a sticky /tmp: O_CREAT may be refused
	if errors.Is(err, os.ErrNotExist) {
		if f, err = os.OpenFile(name, os.O_RDONLY|os.O_CREATE, 0o666); err == nil {
			_ = f.Chmod(0o666) // beyond the umask, for the next user's tests
		}
	}
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
