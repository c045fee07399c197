//go:build !linux

package rtapi

import "errors"

// The trace hook needs Linux's tracefs.
func sysOpenTrace(dir, file string) (int, error) { return -1, errors.ErrUnsupported }

const tracefsMagic = 0x74726163

func sysClose(fd int) {}

func rawWrite(fd int, p *byte, n int) bool { return false }
