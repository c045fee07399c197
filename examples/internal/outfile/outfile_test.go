package outfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/errs"
)

// plantSymlink makes dir/name a symlink to a victim file holding "victim"
// and returns the victim's path; checkVictim says it is untouched and
// out is a regular file holding want.
func plantSymlink(t *testing.T, dir, name string) string {
	t.Helper()
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("victim"), 0o600))
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, name)))
	return victim
}

func checkVictim(t *testing.T, victim, out, want string) {
	t.Helper()
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "victim", string(b), "the file behind the symlink was written")
	fi, err := os.Lstat(out)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "%s is %v, not a regular file", out, fi.Mode())
	b, err = os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, want, string(b))
}

// onlyNames says dir holds nothing but names: no temporary file is left.
func onlyNames(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	require.ElementsMatch(t, names, got)
}

func TestWriteFileReplacesSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := plantSymlink(t, dir, "out.json")
	require.NoError(t, WriteFile(filepath.Join(dir, "out.json"), []byte("{}\n"), 0o644))
	checkVictim(t, victim, filepath.Join(dir, "out.json"), "{}\n")
	onlyNames(t, dir, "out.json")
}

func TestWriteFileDanglingSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "would-be-created")
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "out")))
	require.NoError(t, WriteFile(filepath.Join(dir, "out"), []byte("x"), 0o644))
	_, err := os.Lstat(target)
	require.ErrorIs(t, err, fs.ErrNotExist, "a dangling symlink's target was created")
}

// A hard link at the name is replaced, not truncated.
func TestWriteFileReplacesHardLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("victim"), 0o600))
	require.NoError(t, os.Link(victim, filepath.Join(dir, "out")))
	require.NoError(t, WriteFile(filepath.Join(dir, "out"), []byte("new"), 0o644))
	checkVictim(t, victim, filepath.Join(dir, "out"), "new")
}

func TestCreateModeAndOverwrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "cap.tar.gz")
	require.NoError(t, os.WriteFile(name, []byte("old, longer than the new"), 0o666))
	require.NoError(t, WriteFile(name, []byte("new"), 0o600))
	fi, err := os.Stat(name)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "an existing file's mode is not kept")
	b, _ := os.ReadFile(name)
	require.Equal(t, "new", string(b))
}

// Nothing is at the name until Commit; Close drops the file.
func TestCloseWithoutCommitLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keep"), []byte("before"), 0o644))
	for _, name := range []string{"new", "keep"} {
		f, err := Create(filepath.Join(dir, name), 0o644)
		require.NoError(t, err)
		_, err = f.Write([]byte("half"))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.ErrorIs(t, f.Commit(), os.ErrClosed)
		_, err = f.Write([]byte("x"))
		require.ErrorIs(t, err, os.ErrClosed)
	}
	onlyNames(t, dir, "keep")
	b, _ := os.ReadFile(filepath.Join(dir, "keep"))
	require.Equal(t, "before", string(b))
}

func TestCreateErrorsNameTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Create(filepath.Join(dir, "no", "such", "dir"), 0o644)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.Contains(t, err.Error(), filepath.Join(dir, "no", "such", "dir"))
	require.NotContains(t, err.Error(), ".tmp")
	_, err = Create(dir, 0o644)
	require.ErrorIs(t, err, errs.Invalid)
	onlyNames(t, dir)
}

// A character device is written in place: /dev/null stays /dev/null.
func TestDevNullInPlace(t *testing.T) {
	t.Parallel()
	require.NoError(t, WriteFile("/dev/null", []byte("x"), 0o644))
	fi, err := os.Lstat("/dev/null")
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&fs.ModeCharDevice)
}

// A FIFO is written in place, not replaced.
func TestFIFOInPlace(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, mkfifo(name))
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(name)
		got <- b
	}()
	require.NoError(t, WriteFile(name, []byte("through the pipe"), 0o644))
	require.Equal(t, "through the pipe", string(<-got))
	fi, err := os.Lstat(name)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&fs.ModeNamedPipe)
}

type fakeInfo struct {
	mode fs.FileMode
	sys  any
}

func (f fakeInfo) Name() string       { return "x" }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return f.sys }

func TestDecide(t *testing.T) {
	t.Parallel()
	rootDir := fakeInfo{fs.ModeDir | 0o755, statUID(0)}
	userDir := fakeInfo{fs.ModeDir | 0o755, statUID(1000)}
	sharedRootDir := fakeInfo{fs.ModeDir | fs.ModeSticky | 0o777, statUID(0)} // /tmp
	link := fakeInfo{fs.ModeSymlink | 0o777, nil}
	chr := fakeInfo{fs.ModeDevice | fs.ModeCharDevice | 0o620, nil}
	fifo := fakeInfo{fs.ModeNamedPipe | 0o600, nil}
	reg := fakeInfo{0o644, nil}
	for _, c := range []struct {
		name            string
		at, dir, target fs.FileInfo
		want            way
		invalid         bool
	}{
		{"regular", reg, nil, nil, renamed, false},
		{"char device", chr, nil, nil, inPlace, false},
		{"fifo", fifo, nil, nil, inPlace, false},
		{"symlink to a file", link, rootDir, reg, renamed, false},
		{"dangling symlink", link, rootDir, nil, renamed, false},
		{"/dev/stdout to a tty", link, rootDir, chr, inPlaceLink, false},
		{"/dev/stdout to a pipe", link, rootDir, fifo, inPlaceLink, false},
		{"planted in a user's dir to a device", link, userDir, chr, renamed, false},
		{"planted in /tmp to a device", link, sharedRootDir, chr, renamed, false},
		{"directory", fakeInfo{fs.ModeDir | 0o755, nil}, nil, nil, 0, true},
		{"block device", fakeInfo{fs.ModeDevice | 0o660, nil}, nil, nil, 0, true},
		{"socket", fakeInfo{fs.ModeSocket | 0o660, nil}, nil, nil, 0, true},
	} {
		w, err := decide(c.at, c.dir, c.target)
		if c.invalid {
			require.ErrorIs(t, err, errs.Invalid, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, w, c.name)
	}
}
