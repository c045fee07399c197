package main

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/examples/internal/outfile/outfiletest"
)

// A symlink planted at -csv or -svg is replaced by the capture, never
// written through (issue #37 item 5): a real capture from a host.
func TestOutputSymlinkNotFollowed(t *testing.T) {
	dir := t.TempDir()
	host(t, dir, "testdata/square.hal")
	csv, svg := filepath.Join(dir, "capture.csv"), filepath.Join(dir, "capture.svg")
	victims := []outfiletest.Victim{outfiletest.Plant(t, csv), outfiletest.Plant(t, svg)}
	cmd := exec.Command(binary(t, "halscope"), "-shm-dir", dir, "-rtapi.instance", "11",
		"-n", "10", "-csv", csv, "-svg", svg, "-timeout", "60s")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	for _, v := range victims {
		v.Check(t)
	}
}

// writeFile, the one writer of halscope's files, replaces a symlink.
func TestWriteFileReplacesSymlink(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "out.csv")
	v := outfiletest.Plant(t, name)
	require.NoError(t, writeFile(name, io.Discard, func(w io.Writer) error {
		_, err := io.WriteString(w, "cycle,time_s\n")
		return err
	}))
	v.Check(t)
}
