package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// refusingFS refuses to open one name, as debugfs does under lockdown.
type refusingFS struct {
	fstest.MapFS
	refuse string
}

func (r refusingFS) Open(name string) (fs.File, error) {
	if name == r.refuse {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return r.MapFS.Open(name)
}

// A file the captured machine refused to open is refused again when the
// capture is replayed, not missing: the live and replayed reports agree
// (TestCaptureRoundTrip failed on a machine with debugfs mounted).
func TestCaptureKeepsARefusedFile(t *testing.T) {
	const refused = "sys/kernel/debug/sched/preempt"
	live := refusingFS{MapFS: fstest.MapFS{
		"proc/version": {Data: []byte("Linux version 6.18\n")},
		refused:        {Data: []byte("none\n")},
	}, refuse: refused}
	rec := newRecordingFS(live)
	_, err := fs.ReadFile(rec, refused)
	require.ErrorIs(t, err, fs.ErrPermission)
	v, err := fs.ReadFile(rec, "proc/version")
	require.NoError(t, err)

	var buf bytes.Buffer
	_, err = rec.writeTarGz(&buf)
	require.NoError(t, err)
	name := filepath.Join(t.TempDir(), "capture.tar.gz")
	require.NoError(t, os.WriteFile(name, buf.Bytes(), 0o644))
	replay, err := loadTarGz(name)
	require.NoError(t, err)

	_, err = fs.ReadFile(replay, refused)
	require.ErrorIs(t, err, fs.ErrPermission)
	_, err = replay.Open(refused)
	require.ErrorIs(t, err, fs.ErrPermission)
	_, err = fs.Stat(replay, refused)
	require.NoError(t, err, "there, only not readable")
	got, err := fs.ReadFile(replay, "proc/version")
	require.NoError(t, err)
	require.Equal(t, v, got)
	_, err = fs.Stat(replay, deniedList)
	require.True(t, errors.Is(err, fs.ErrNotExist), "the list is the capture's, not the machine's: %v", err)

	// The same capture unpacked into a directory (-root DIR) refuses it
	// too: it read back as an empty file before.
	dir := filepath.Join(t.TempDir(), "tree")
	untar(t, name, dir)
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	replay, err = withDenied(regularFS{root})
	require.NoError(t, err)
	_, err = fs.ReadFile(replay, refused)
	require.ErrorIs(t, err, fs.ErrPermission)
	_, err = fs.Stat(replay, refused)
	require.NoError(t, err, "there, only not readable")
	got, err = fs.ReadFile(replay, "proc/version")
	require.NoError(t, err)
	require.Equal(t, v, got)
	_, err = fs.Stat(replay, deniedList)
	require.True(t, errors.Is(err, fs.ErrNotExist), "the list is the capture's, not the machine's: %v", err)
}
