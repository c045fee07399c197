package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing/fstest"
	"time"
)

// recordingFS wraps an fs.FS and remembers every file read through it (its
// bytes as read) and every name that was only stat'ed, so that exactly what
// detection saw can be written out again.
type recordingFS struct {
	inner fs.FS

	mu     sync.Mutex
	files  map[string][]byte // read content
	dirs   map[string]bool
	stats  map[string]bool // existed, content not read
	denied map[string]bool // there, but opening it was refused
}

func newRecordingFS(inner fs.FS) *recordingFS {
	return &recordingFS{inner: inner, files: map[string][]byte{}, dirs: map[string]bool{},
		stats: map[string]bool{}, denied: map[string]bool{}}
}

// deniedList is the capture's entry that names the files whose opening
// was refused (debugfs under lockdown, say): a tar entry cannot say it.
const deniedList = ".rtcheck/denied"

// Open implements fs.FS.
func (r *recordingFS) Open(name string) (fs.File, error) {
	f, err := r.inner.Open(name)
	if errors.Is(err, fs.ErrPermission) {
		r.mu.Lock()
		r.denied[name] = true
		r.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.IsDir() {
		r.mu.Lock()
		r.dirs[name] = true
		r.mu.Unlock()
		return f, nil
	}
	return &recordingFile{File: f, fs: r, name: name}, nil
}

// Stat implements fs.StatFS so that existence checks are recorded too.
func (r *recordingFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := fs.Stat(r.inner, name)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if fi.IsDir() {
		r.dirs[name] = true
	} else {
		r.stats[name] = true
	}
	r.mu.Unlock()
	return fi, nil
}

type recordingFile struct {
	fs.File
	fs   *recordingFS
	name string
	buf  []byte
	bad  bool
}

func (f *recordingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.buf = append(f.buf, p[:n]...)
	if err != nil && !errors.Is(err, io.EOF) {
		f.bad = true
	}
	return n, err
}

func (f *recordingFile) Close() error {
	if !f.bad {
		f.fs.mu.Lock()
		// Keep the longest read if a file is read twice.
		if old, ok := f.fs.files[f.name]; !ok || len(f.buf) > len(old) {
			f.fs.files[f.name] = f.buf
		}
		f.fs.mu.Unlock()
	}
	return f.File.Close()
}

// writeTarGz writes what was recorded as a gzip-compressed tar: read files
// with their content, stat'ed files as empty files, and every parent
// directory. Names are sorted so the archive is reproducible.
func (r *recordingFS) writeTarGz(w io.Writer) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	dirs := map[string]bool{}
	addParents := func(name string) {
		for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range r.dirs {
		if d != "." {
			dirs[d] = true
			addParents(d)
		}
	}
	entries := map[string][]byte{}
	for n, b := range r.files {
		entries[n] = b
		addParents(n)
	}
	stated := func(n string) { // there, for Stat
		if _, ok := entries[n]; !ok {
			entries[n] = nil
			addParents(n)
		}
	}
	for n := range r.stats {
		stated(n)
	}
	if len(r.denied) > 0 {
		var list []byte
		for _, n := range slices.Sorted(maps.Keys(r.denied)) {
			list = append(list, n+"\n"...)
			stated(n)
		}
		entries[deniedList] = list
		addParents(deniedList)
	}
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	mtime := time.Unix(0, 0)
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: mtime}); err != nil {
			return 0, err
		}
	}
	for _, n := range slices.Sorted(maps.Keys(entries)) {
		b := entries[n]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(b)), ModTime: mtime}); err != nil {
			return 0, err
		}
		if _, err := tw.Write(b); err != nil {
			return 0, err
		}
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	return len(entries), zw.Close()
}

// Caps for reading a capture: detection never reads more than this.
const (
	maxCaptureEntry = 16 << 20
	maxCaptureTotal = 256 << 20
)

// loadTarGz reads a capture written by writeTarGz (or any tar.gz of a tree
// laid out like /) into an in-memory fs.FS.
func loadTarGz(name string) (fs.FS, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	tr := tar.NewReader(zr)
	m := fstest.MapFS{}
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		clean := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if clean == "" || !fs.ValidPath(clean) {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			m[clean] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		case tar.TypeReg:
			if h.Size > maxCaptureEntry || total+h.Size > maxCaptureTotal {
				return nil, fmt.Errorf("%s: entry %s too large (%d bytes)", name, clean, h.Size)
			}
			b, err := io.ReadAll(io.LimitReader(tr, h.Size))
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, clean, err)
			}
			total += int64(len(b))
			m[clean] = &fstest.MapFile{Data: b, Mode: 0o644}
		}
	}
	return withDenied(m)
}

// withDenied is src refusing to open what the captured machine refused
// to, as its deniedList names; src itself when it has no list. The list
// is the capture's, not the machine's: it is not found in the result.
func withDenied(src fs.FS) (fs.FS, error) {
	list, err := fs.ReadFile(src, deniedList)
	if errors.Is(err, fs.ErrNotExist) {
		return src, nil
	}
	if err != nil {
		return nil, err
	}
	d := deniedFS{FS: src, denied: map[string]bool{}}
	for n := range strings.Lines(string(list)) {
		d.denied[strings.TrimSuffix(n, "\n")] = true
	}
	return d, nil
}

// deniedFS is a loaded capture that refuses to open what the captured
// machine refused to.
type deniedFS struct {
	fs.FS
	denied map[string]bool
}

// Open implements fs.FS: fs.ErrPermission for a denied name, and
// fs.ErrNotExist for the list.
func (d deniedFS) Open(name string) (fs.File, error) {
	if d.denied[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	if name == deniedList {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return d.FS.Open(name)
}

// ReadFile implements fs.ReadFileFS as Open does.
func (d deniedFS) ReadFile(name string) ([]byte, error) {
	if d.denied[name] || name == deniedList {
		_, err := d.Open(name)
		return nil, err
	}
	return fs.ReadFile(d.FS, name)
}

// Stat implements fs.StatFS: a denied name is there, only not readable.
func (d deniedFS) Stat(name string) (fs.FileInfo, error) {
	if name == deniedList {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return fs.Stat(d.FS, name)
}
