//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is a terminal, so a program may redraw its
// screen in place instead of printing line after line. The BSDs and macOS
// name Linux's TCGETS request TIOCGETA.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TIOCGETA)
	return err == nil
}
