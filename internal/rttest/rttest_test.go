package rttest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestSkipSummary: a skipped test is counted, with what it lacked, so
// that Main can say so without -v.
func TestSkipSummary(t *testing.T) {
	skipped.by = nil // -count=N runs this again
	if s := SkipSummary(); s != "" {
		t.Fatalf("nothing skipped yet: %q", s)
	}
	t.Setenv(RequireEnv, "") // this test wants the skip, even in CI
	t.Run("lacks a tool", func(t *testing.T) {
		requireTool(t, "gortapi-no-such-tool", "apt-get install nothing") // RequireTool but for -short
		t.Fatal("RequireTool did not skip")
	})
	s := SkipSummary()
	if !strings.Contains(s, "1 test SKIPPED: 1 for gortapi-no-such-tool (apt-get install nothing)") || !strings.Contains(s, RequireEnv+"=1") {
		t.Fatalf("summary %q", s)
	}
	if p := requireTool(t, "sh", "a shell"); p == "" {
		t.Fatal("sh not found")
	}
}

// TestToolsAbsent: GORTAPI_TOOLS=absent (the 386 guest, which has no
// toolchain and no Debian packages) makes RequireTool skip even where
// GORTAPI_REQUIRE_RT=1 makes it fail; RequireRT and RequireRoot are not
// affected (they are checked in the guest).
func TestToolsAbsent(t *testing.T) {
	t.Setenv(RequireEnv, "1")
	t.Setenv(ToolsEnv, "absent")
	t.Cleanup(func() { // the skip wanted here is no skip to report
		skipped.Lock()
		delete(skipped.by, "gortapi-no-such-tool (apt-get install nothing)")
		skipped.Unlock()
	})
	ran := t.Run("lacks a tool", func(t *testing.T) {
		requireTool(t, "gortapi-no-such-tool", "apt-get install nothing") // RequireTool but for -short
		t.Fatal("RequireTool did not skip")
	})
	if !ran {
		t.Fatal("RequireTool failed the test instead of skipping it")
	}
}

// Child re-runs this binary with the role in the environment; ChildRole
// reads it there.
func TestChild(t *testing.T) {
	if ChildRole() == "echo" {
		fmt.Println("child of", os.Getenv("RTTEST_PARENT"), "in", mustGetwd(t))
		return
	}
	RequireSelfExec(t)
	cmd := Child("echo", "-test.run=^TestChild$", "-test.v")
	cmd.Env = append(cmd.Env, "RTTEST_PARENT=parent", ChildEnv+"=echo") // a duplicate is harmless
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child of parent in") || !strings.Contains(string(out), "--- PASS: TestChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if ChildRole() != "" {
		t.Fatalf("the parent plays role %q", ChildRole())
	}
}

// Under a user-mode emulator RequireSelfExec skips before it starts any
// process: a qemu-arm-static child of ipc.test, forked to probe exec, slept
// in a futex until the package's timeout.
func TestRequireSelfExecSkipsUnderAnEmulator(t *testing.T) {
	defer func(e func() string, s func() error) { Emulator, selfExec = e, s }(Emulator, selfExec)
	Emulator = func() string { return "qemu-user (a test's stand-in)" }
	started := false
	selfExec = func() error { started = true; return nil }
	var sub *testing.T
	t.Run("child", func(t *testing.T) {
		sub = t
		RequireSelfExec(t)
	})
	if !sub.Skipped() || started {
		t.Fatalf("under an emulator: skipped %v, probe started %v; want skipped, not started", sub.Skipped(), started)
	}
}

// ChildAs runs the child as another user, from a copy of the binary that
// user may run, removed afterwards.
func TestChildAs(t *testing.T) {
	if ChildRole() == "whoami" {
		fmt.Printf("uid %d gid %d\n", os.Getuid(), os.Getgid())
		return
	}
	var dir string
	t.Run("as nobody", func(t *testing.T) {
		cmd := ChildAs(t, Nobody, "whoami", "-test.run=^TestChildAs$")
		dir = cmd.Dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "uid 65534 gid 65534") {
			t.Fatalf("child: %v\n%s", err, out)
		}
	})
	if dir != "" {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("the binary's copy in %s outlived the test: %v", dir, err)
		}
	}
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// TestRequireSkipsUnderShort: under -short (the unit lane) every Require
// helper skips, even with GORTAPI_REQUIRE_RT=1 and the tool, the root or
// the toolchain at hand, and counts no skip for want of it.
func TestRequireSkipsUnderShort(t *testing.T) {
	short := flag.Lookup("test.short")
	was := short.Value.String()
	if err := short.Value.Set("true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { short.Value.Set(was) })
	t.Setenv(RequireEnv, "1")
	before := SkipSummary()
	for name, require := range map[string]func(testing.TB){
		"RequireRT":   RequireRT,
		"RequireRoot": func(t testing.TB) { RequireRoot(t, "a test") },
		"RequireGo":   func(t testing.TB) { RequireGo(t) },
		"RequireTool": func(t testing.TB) { RequireTool(t, "sh", "a shell") },
	} {
		if t.Run(name, func(t *testing.T) {
			require(t)
			t.Fatal("did not skip under -short")
		}) == false {
			t.Errorf("%s failed the test instead of skipping it", name)
		}
	}
	if after := SkipSummary(); after != before {
		t.Fatalf("a -short skip was counted: %q, before %q", after, before)
	}
	if got := Rounds(2000); got != 200 {
		t.Errorf("Rounds(2000) under -short = %d, want 200", got)
	}
	if got := Rounds(5); got != 1 {
		t.Errorf("Rounds(5) under -short = %d, want 1", got)
	}
	short.Value.Set("false")
	if got := Rounds(2000); got != 2000 {
		t.Errorf("Rounds(2000) = %d, want 2000", got)
	}
}

// Program builds a program once, into a directory other users may read,
// and the path it returns runs.
func TestProgram(t *testing.T) {
	bin := Program(t, "./testdata/hello")
	t.Cleanup(removePrograms) // this package's tests do not run under Main
	if again := Program(t, "./testdata/hello"); again != bin {
		t.Fatalf("built twice: %s, then %s", bin, again)
	}
	out, err := exec.Command(bin).Output()
	if err != nil || string(out) != "hello\n" {
		t.Fatalf("%s: %q, %v", bin, out, err)
	}
	st, err := os.Stat(ProgramDir())
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("program directory %s: %v, %v", ProgramDir(), st.Mode(), err)
	}
}

// A test RequireRT lets run holds RTLockFile until it ends: another
// package's test binary, run at once by go test ./..., cannot take it
// meanwhile (flock conflicts between open files, in one process too).
func TestRequireRTHoldsTheLockForTheTest(t *testing.T) {
	other, err := os.OpenFile(RTLockFile, os.O_RDONLY|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tryLock := func() error {
		err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			_ = syscall.Flock(int(other.Fd()), syscall.LOCK_UN)
		}
		return err
	}
	if testing.Short() {
		t.Skip("-short runs no SCHED_FIFO test")
	}
	t.Run("rt", func(t *testing.T) {
		RequireRT(t)
		if err := tryLock(); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Fatalf("took the lock while a SCHED_FIFO test runs: %v", err)
		}
	})
	rtLock.Lock() // another package's test may hold it now: look at this process's hold
	defer rtLock.Unlock()
	if rtLock.holds != 0 || rtLock.f != nil {
		t.Fatalf("still held after the test: holds %d, file %v", rtLock.holds, rtLock.f)
	}
}

// A test and its subtests may each call RequireRT: the process takes
// the lock once and keeps it until the last of them ends.
func TestRequireRTNests(t *testing.T) {
	RequireRT(t)
	t.Run("sub", func(t *testing.T) { RequireRT(t) }) // would wait for its parent forever
	rtLock.Lock()
	defer rtLock.Unlock()
	if rtLock.holds != 1 || rtLock.f == nil {
		t.Fatalf("holds %d, file %v after the subtest", rtLock.holds, rtLock.f)
	}
}
