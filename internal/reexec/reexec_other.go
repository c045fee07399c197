//go:build !linux

package reexec

import "os/exec"

// dieWithParent has no way to tie the child's life to its parent here.
func dieWithParent(*exec.Cmd) {}
