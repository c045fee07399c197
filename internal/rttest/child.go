package rttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gortapi/gortapi/internal/reexec"
)

// ChildEnv carries Child's role to the re-executed test binary
// (internal/reexec's).
const ChildEnv = reexec.Env

// Nobody is the unprivileged user (uid and gid 65534) tests run a child
// as with ChildAs.
var Nobody = syscall.Credential{Uid: 65534, Gid: 65534}

// ChildRole returns the role Child started this process with, or "". A
// test that doubles as its own child begins with
//
//	if rttest.ChildRole() == "narrowed" { ...the child's side...; return }
//
// and a TestMain switches on it before m.Run for roles that are no test.
func ChildRole() string { return reexec.Role() }

// Child returns an unstarted command re-running this test binary as role,
// with args (usually "-test.run=^TestName$", or "-test.run=^$" for a role
// TestMain plays) and this environment plus ChildEnv=role
// (reexec.Command: on Linux the child dies with the test).
func Child(role string, args ...string) *exec.Cmd { return reexec.Command(role, args...) }

// ChildAs is Child run as user cred (usually Nobody), from a copy of the
// binary in a directory of its own (its working directory, removed when t
// ends). It skips t as RequireRoot and RequireSelfExec do.
func ChildAs(t testing.TB, cred syscall.Credential, role string, args ...string) *exec.Cmd {
	t.Helper()
	RequireRoot(t, "runs a child process as another user")
	RequireSelfExec(t)
	dir, err := os.MkdirTemp("", "gortapi-child-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, filepath.Base(os.Args[0]))
	exe, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(bin, exe, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := Child(role, args...)
	cmd.Path, cmd.Args[0], cmd.Dir = bin, bin, dir
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &cred
	return cmd
}
