package rttest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// ChildEnv is the environment variable through which Child tells a
// re-executed test binary the role it plays.
const ChildEnv = "GORTAPI_TEST_CHILD"

// Nobody is the unprivileged user (uid and gid 65534) tests run a child
// as with ChildAs.
var Nobody = syscall.Credential{Uid: 65534, Gid: 65534}

// ChildRole returns the role Child started this process to play, or ""
// when it is not such a child. A test that doubles as its own child
// begins with
//
//	if rttest.ChildRole() == "narrowed" { ...the child's side...; return }
//
// and a TestMain switches on it before m.Run for roles that are no test.
func ChildRole() string { return os.Getenv(ChildEnv) }

// Child returns a command that re-runs this test binary as a second
// process playing role. args are the binary's arguments: usually
// "-test.run=^TestName$" (and "-test.v" to see its PASS line), or
// "-test.run=^$" for a role TestMain plays, which may read more arguments
// of its own from os.Args. The child's environment is this process's plus
// ChildEnv=role; append to cmd.Env for more ("RTAPI_CPU=" empties a
// variable). The command is not started.
func Child(role string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), ChildEnv+"="+role)
	return cmd
}

// ChildAs is Child run as another user (cred; usually Nobody), a real
// second user with none of this process's privileges. That user may not
// read the test binary where go test built it, so it is copied into a
// directory of its own, which becomes the child's working directory and
// is removed when t ends. Starting a process as another user needs root:
// without it ChildAs skips t, loudly (RequireRoot); so does a kernel that
// cannot execute the binary (RequireSelfExec).
func ChildAs(t testing.TB, cred syscall.Credential, role string, args ...string) *exec.Cmd {
	t.Helper()
	RequireRoot(t, "runs a child process as another user")
	RequireSelfExec(t)
	dir, err := os.MkdirTemp("", "gortapi-child-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(os.Args[0]))
	if err := copyExecutable(bin, os.Args[0]); err != nil {
		t.Fatal(err)
	}
	cmd := Child(role, args...)
	cmd.Path, cmd.Args[0], cmd.Dir = bin, bin, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &cred}
	return cmd
}

func copyExecutable(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
