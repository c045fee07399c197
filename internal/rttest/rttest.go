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

// RequireEnv set to "1" turns the Require helpers' skips into failures
// (CI, which runs as root).
const RequireEnv = "GORTAPI_REQUIRE_RT"

// SkipShort skips t under go test -short (the unit lane runs no SCHED_FIFO,
// root or other programs), whatever RequireEnv says.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (the unit lane) runs no " + what + "; go test without -short does")
	}
}

// ParallelUnlessRT calls t.Parallel where Main refused SCHED_FIFO (under
// -short); otherwise the test's SCHED_FIFO tasks run alone, as two such
// tests starve each other.
func ParallelUnlessRT(t *testing.T) {
	t.Helper()
	if realTimeDenied.Load() {
		t.Parallel()
	}
}

// RequireRT skips t, loudly, unless this process may use SCHED_FIFO (fails
// with RequireEnv=1; skips under -short). A test it lets run holds
// RTLockFile until it ends.
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

// CleanShm removes instance's segments left in dir (/dev/shm), reports them
// on stderr, and returns 1 when there were any, for TestMain to fail.
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

// RequireRoot skips t, loudly, unless root (fails with RequireEnv=1;
// skips under -short).
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

// ToolsEnv set to "absent" makes RequireTool skip even with RequireEnv=1
// (.ci/guest386.sh's guest lacks the tools on purpose).
const ToolsEnv = "GORTAPI_TOOLS"

// RequireTool returns the path of the program name, or skips t, loudly,
// saying how to install it ("apt-get install rt-tests"); fails with
// RequireEnv=1 unless ToolsEnv=absent; skips under -short.
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

// RequireGo is RequireTool for the go command; under a user-mode
// emulator it skips t (ForkUnderEmulator).
func RequireGo(t testing.TB) string {
	t.Helper()
	SkipShort(t, "test that builds with the go command")
	SkipIfEmulated(t, ForkUnderEmulator)
	return requireTool(t, "go", "install Go 1.26 or later")
}

// skipped counts the Require helpers' skips by what was lacking.
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

// SkipSummary is one line counting this binary's tests skipped for want of
// privileges or tools; "" when none was.
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

var realTimeDenied atomic.Bool

// Main runs the tests (from TestMain: os.Exit(rttest.Main(m))), removes
// what Program built, and prints SkipSummary to /dev/tty, else stderr
// (go test hides a passing package's output). Under -short it first calls
// sys.DenyRealTime and allows 4×GOMAXPROCS parallel tests unless
// -test.parallel is set.
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

// widenParallel: unit-lane tests mostly wait, so more than GOMAXPROCS at
// once keep the CPUs busy.
func widenParallel() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// RequireLayout64 fails t unless every 64-bit field of typ (at any depth)
// is 8-byte aligned, and typ too when it has one. Shared-memory layouts
// must pass it: 386 and arm align them to 4, where 64-bit atomics panic
// and a 32-bit process would disagree with a 64-bit one on the layout.
// An atomic.Int64/Uint64 field, or a [0]atomic.Uint64 marker, aligns to 8.
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

// Emulator names the user-mode emulator running this process, "" if none.
var Emulator = sync.OnceValue(emulator)

// SkipIfEmulated skips t, saying why, under an emulator (Emulator): for a
// test that cannot work there, never one that merely fails there.
func SkipIfEmulated(t testing.TB, why string) {
	t.Helper()
	if e := Emulator(); e != "" {
		t.Skip("cannot run under " + e + ": " + why)
	}
}

// CPUEmulator names the CPU emulator the whole machine runs on (qemu's
// TCG, as in CI's 386 guest), "" on a real or hardware-virtualised CPU.
var CPUEmulator = sync.OnceValue(cpuEmulator)

// SkipIfCPUTimeEmulated skips t, saying why, under a user-mode emulator
// (Emulator) or on an emulated CPU (CPUEmulator): there a thread's CPU
// time and its switches follow the emulator's threads, and a thread that
// sleeps every millisecond can seem to run for several (no steal time is
// accounted when a virtual CPU does not run). For a test that judges
// threads by how long they ran without a switch.
func SkipIfCPUTimeEmulated(t testing.TB, why string) {
	t.Helper()
	SkipIfEmulated(t, why)
	if e := CPUEmulator(); e != "" {
		t.Skip("cannot run on " + e + ": " + why)
	}
}

var selfExec = sync.OnceValue(func() error {
	return exec.Command(os.Args[0], "-test.run=^$", "-test.count=1").Run()
})

// ForkUnderEmulator is why a test that starts a process skips under a
// user-mode emulator (SkipIfEmulated): qemu-user's fork of a
// multithreaded process can deadlock before exec. CI's linux/arm lane
// once waited 10 minutes in forkExec's wait4 for such a child.
const ForkUnderEmulator = "a child process: the emulator's fork of a multithreaded process can deadlock before exec"

// RequireSelfExec skips t, loudly, where the test binary cannot run as a
// child: under an emulator (its fork can deadlock) or on ENOEXEC. Other
// failures to start it fail t.
func RequireSelfExec(t testing.TB) {
	t.Helper()
	SkipIfEmulated(t, ForkUnderEmulator)
	err := selfExec()
	if errors.Is(err, syscall.ENOEXEC) {
		t.Skip("cannot start a child process: the kernel cannot execute this test binary (" + err.Error() +
			"); it runs under a user-mode emulator without binfmt_misc")
	}
	if err != nil {
		t.Fatalf("re-execute the test binary: %v", err)
	}
}

// RTLockFile is flocked by RequireRT for a test's length, so that two
// packages' SCHED_FIFO tests never starve each other. A test's child
// process (ChildEnv set) relies on its parent's hold.
var RTLockFile = filepath.Join(os.TempDir(), "gortapi-rt-tests.lock")

// rtLock is this binary's hold on RTLockFile, shared by its tests.
var rtLock struct {
	sync.Mutex
	f     *os.File
	holds int
}

// holdRTLock takes RTLockFile for t's length, waiting for its holder; one
// it cannot open is logged and skipped.
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

// lockFile opens or makes name and waits for an exclusive flock on it.
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
