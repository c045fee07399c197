//go:build linux

package shm

import (
	"errors"
	"os"
	"testing"
)

// FuzzSegmentHeader attaches segment files of arbitrary contents, then
// overwrites the mapped header with arbitrary bytes as another process
// could after the attach, and uses the segment: every outcome is a
// segment or one of the typed errors, never a panic or an access outside
// the mapping.
func FuzzSegmentHeader(f *testing.F) {
	f.Add(validHeader(70, 64), []byte{})
	f.Add(validHeader(70, 4096), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte("short"), []byte{})
	f.Add(validHeader(70, 64)[:HeaderSize], []byte{})
	bad := validHeader(70, 64)
	bad[16] = 0xff // size
	f.Add(bad, validHeader(71, 1<<20))
	o := Options{Dir: f.TempDir(), Instance: testInstance, AttachTimeout: -1}
	path := o.Path(70)
	f.Fuzz(func(t *testing.T, file, after []byte) {
		if len(file) > 1<<16 {
			file = file[:1<<16]
		}
		_ = os.Remove(path)
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		s, err := Attach(o, 70)
		if err != nil {
			wantTyped(t, err)
			return
		}
		if len(s.Bytes()) != s.Size() || s.Size() != len(file)-HeaderSize {
			t.Fatalf("size %d, %d bytes, file %d", s.Size(), len(s.Bytes()), len(file))
		}
		copy(s.mapping[:HeaderSize], after) // a writer corrupts the header
		_ = s.Attached()
		if err := s.Check(); err != nil {
			t.Fatalf("Check of an intact file: %v", err)
		}
		if s2, err := New(o, 70, s.Size()); err == nil {
			_ = s2.Close()
		} else {
			wantTyped(t, err)
		}
		if err := s.Delete(); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	})
}

func wantTyped(t *testing.T, err error) {
	t.Helper()
	for _, want := range []error{ErrTruncated, ErrCorrupt, ErrVersion, ErrNotInitialised, ErrNotExist, ErrSizeMismatch} {
		if errors.Is(err, want) {
			return
		}
	}
	t.Fatalf("untyped error: %v", err)
}
