//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package cli

import "os"

// IsTerminal reports whether f is a terminal. Where termios does not
// exist it says no: the programs then print line after line.
func IsTerminal(f *os.File) bool { return false }
