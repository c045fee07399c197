// Package outfiletest checks that a tool's output file does not follow a
// symlink planted at its name: Plant puts the symlink there, pointing at
// a victim file; Check says the victim is unchanged and the output is a
// regular file.
package outfiletest

import (
	"os"
	"path/filepath"
	"testing"
)

// victimText is what a victim file holds until someone writes through the
// symlink.
const victimText = "victim: must not change\n"

// Victim is a file that a symlink at an output name points at.
type Victim struct {
	Path string // the victim file
	Link string // the symlink planted at the output name
}

// Plant makes name a symlink to a new victim file (in a directory of its
// own) and returns it.
func Plant(t testing.TB, name string) Victim {
	t.Helper()
	v := Victim{Path: filepath.Join(t.TempDir(), "victim"), Link: name}
	if err := os.WriteFile(v.Path, []byte(victimText), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(v.Path, name); err != nil {
		t.Fatal(err)
	}
	return v
}

// Check fails t unless the victim holds what it held and the output name
// is a regular, non-empty file.
func (v Victim) Check(t testing.TB) {
	t.Helper()
	if b, err := os.ReadFile(v.Path); err != nil || string(b) != victimText {
		t.Errorf("%s: written through the symlink at %s: now %q (%v)", v.Path, v.Link, truncate(b), err)
	}
	fi, err := os.Lstat(v.Link)
	switch {
	case err != nil:
		t.Errorf("output %s: %v", v.Link, err)
	case !fi.Mode().IsRegular():
		t.Errorf("output %s is %v, not a regular file", v.Link, fi.Mode().Type())
	case fi.Size() == 0:
		t.Errorf("output %s is empty", v.Link)
	}
}

func truncate(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}
