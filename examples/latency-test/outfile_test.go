package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/gortapi/gortapi/examples/internal/outfile/outfiletest"
)

// A symlink planted at -histfile, -json, -svg or -trace is replaced by the
// output, never written through (issue #37 item 5).
func TestOutputSymlinkNotFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var victims []outfiletest.Victim
	args := []string{"-flavor", "sim", "-D", "0.2", "-q", "-h", "100"}
	for _, f := range []string{"histfile", "json", "svg", "trace"} {
		name := filepath.Join(dir, "out."+f)
		victims = append(victims, outfiletest.Plant(t, name))
		args = append(args, "-"+f, name)
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), args, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, v := range victims {
		v.Check(t)
	}
}
