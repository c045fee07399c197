package main

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/gortapi/gortapi/rtapi"
)

// tokenBytes is the token's entropy: 256 bits, as hex.
const tokenBytes = 32

// NewToken returns a fresh random token, 64 hex digits.
func NewToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make the token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// tokenEqual compares a presented token with the server's in constant
// time (for tokens of the server's length).
func tokenEqual(got, want string) bool {
	return len(want) > 0 && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// WriteToken puts token, and a newline, in a new file at path, mode 0640
// and of group (a name or number; "" keeps the process's group), so that
// the host's trusted group may read it and nobody else. A file or
// symlink already at path is replaced, never written through.
func WriteToken(path, token, group string) error {
	gid := -1
	if group != "" {
		n, err := strconv.Atoi(group)
		if err != nil {
			g, lerr := user.LookupGroup(group)
			if lerr != nil {
				return fmt.Errorf("token file: group %q: %w (%w)", group, lerr, rtapi.ErrInvalid)
			}
			if n, err = strconv.Atoi(g.Gid); err != nil {
				return fmt.Errorf("token file: group %q: gid %q: %w", group, g.Gid, rtapi.ErrInvalid)
			}
		}
		gid = n
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	// A new file beside path (O_EXCL: never someone else's), renamed over
	// it: a symlink, FIFO or file planted at path is replaced.
	f, err := os.CreateTemp(filepath.Dir(path), ".halweb-token-*")
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	tmp := f.Name()
	err = func() error {
		defer f.Close()
		if gid >= 0 {
			if err := f.Chown(-1, gid); err != nil {
				return fmt.Errorf("give it to group %s: %w", group, err)
			}
		}
		if err := f.Chmod(0o640); err != nil {
			return err
		}
		if _, err := f.WriteString(token + "\n"); err != nil {
			return err
		}
		return f.Sync()
	}()
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("token file %s: %w", path, err)
	}
	return nil
}
