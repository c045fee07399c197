package rttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var programs struct {
	sync.Mutex
	dir   string // made 0755 on first use: other users run the programs from it
	built map[string]func() (string, error)
}

// Program builds the main package pkg ("." or "../halrun") once per test
// binary, into a directory other users may read (removed by Main), and
// returns its path. A failed build fails t; it skips as RequireGo and
// RequireSelfExec do. Safe for parallel tests.
func Program(t testing.TB, pkg string) string {
	t.Helper()
	RequireGo(t)
	RequireSelfExec(t)
	programs.Lock()
	if programs.dir == "" {
		dir, err := os.MkdirTemp("", "gortapi-programs-")
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err != nil {
			programs.Unlock()
			t.Fatalf("a directory for the programs: %v", err)
		}
		programs.dir = dir
		programs.built = map[string]func() (string, error){}
	}
	build := programs.built[pkg]
	if build == nil {
		dir := programs.dir
		build = sync.OnceValues(func() (string, error) {
			abs, err := filepath.Abs(pkg)
			if err != nil {
				return "", err
			}
			path := filepath.Join(dir, filepath.Base(abs))
			if out, err := exec.Command("go", "build", "-o", path, pkg).CombinedOutput(); err != nil {
				return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
			}
			return path, nil
		})
		programs.built[pkg] = build
	}
	programs.Unlock()
	path, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// ProgramDir is Program's directory ("" before its first build).
func ProgramDir() string {
	programs.Lock()
	defer programs.Unlock()
	return programs.dir
}

func removePrograms() {
	programs.Lock()
	defer programs.Unlock()
	if programs.dir != "" {
		os.RemoveAll(programs.dir)
		programs.dir, programs.built = "", nil
	}
}
