package remedy

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// One limits.d group everywhere: no message, doc or example names a
// group other than Group in a limits.d line or a udev rule.
func TestOneGroupName(t *testing.T) {
	t.Parallel()
	other := regexp.MustCompile(`@([a-z_][a-z0-9_-]*) +(-|soft|hard) +(rtprio|memlock)|GROUP=\\?"([a-z_][a-z0-9_-]*)`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		ext := filepath.Ext(path)
		if d.IsDir() || (ext != ".go" && ext != ".md" && ext != ".service" && ext != ".conf") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range other.FindAllStringSubmatch(string(b), -1) {
			g := m[1] + m[4]
			if g != Group {
				t.Errorf("%s: %q names group %q, want %q", path, m[0], g, Group)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
