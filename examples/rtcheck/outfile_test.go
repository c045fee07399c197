package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/examples/internal/outfile/outfiletest"
)

// -capture at a symlink replaces the symlink; at a hard link to another
// file it replaces the link and leaves the file alone, where O_NOFOLLOW
// and O_TRUNC truncated it (issue #37 item 5).
func TestCaptureLinkNotWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	symlinked := filepath.Join(dir, "sym.tar.gz")
	v := outfiletest.Plant(t, symlinked)
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("victim"), 0o644))
	linked := filepath.Join(dir, "hard.tar.gz")
	require.NoError(t, os.Link(victim, linked))
	for _, name := range []string{symlinked, linked} {
		code, _, errOut := runRTCheck(t, "-root", filepath.Join(fixtures, "rtai"), "-capture", name)
		require.Equal(t, 0, code, errOut)
		fi, err := os.Lstat(name)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode(), "%s: a regular file for its owner only", name)
	}
	v.Check(t)
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "victim", string(b), "the hard-linked file was written")
}
