package kerneldetect

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// Read caps. Pseudo-files report st_size 0 or lie, so the size is never
// trusted: at most the cap plus one byte is read.
const (
	maxSmallFile  = 256 << 10 // /proc and /sys attribute files
	maxConfigFile = 8 << 20   // a kernel config, compressed or not
)

// readCapped reads at most limit bytes of name. A longer file returns the
// first limit bytes and an error wrapping errTooLarge.
func readCapped(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAllCapped(f, limit)
}

func readAllCapped(r io.Reader, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, limit+1))
	if err != nil {
		return buf.Bytes(), err
	}
	if n > limit {
		return buf.Bytes()[:limit], fmt.Errorf("%w (%d bytes)", errTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// gunzipCapped decompresses at most limit bytes of a gzip stream.
func gunzipCapped(b []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return readAllCapped(zr, limit)
}

// describeErr turns a read error into evidence text.
func describeErr(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "missing"
	case errors.Is(err, fs.ErrPermission):
		return "not readable (permission denied)"
	case errors.Is(err, errTooLarge):
		return "truncated: " + err.Error()
	default:
		return "unreadable: " + err.Error()
	}
}

// exists reports whether name exists (files, directories, devices).
func exists(fsys fs.FS, name string) (fs.FileInfo, bool) {
	fi, err := fs.Stat(fsys, name)
	return fi, err == nil
}
