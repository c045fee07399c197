package sys

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Read appends each online CPU's accounts to into[:0] and returns them
// with when it read (Nanotime). The error is an *os.PathError, or wraps
// ErrProcStat.
func (c *CPUAccounts) Read(into []CPUAccount) ([]CPUAccount, int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		fd, err := unix.Open("/proc/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return into[:0], 0, &os.PathError{Op: "open", Path: "/proc/stat", Err: err}
		}
		c.fd = fd
		// cpu lines are under 160 bytes; the rest of the file is not read.
		c.buf = make([]byte, 4096+160*runtime.NumCPU())
	}
	for {
		n, err := c.readAll()
		if err != nil {
			return into[:0], 0, err
		}
		at := Nanotime()
		accts, err := ParseCPUAccounts(c.buf[:n], into[:0])
		if err != nil && n == len(c.buf) && len(c.buf) < maxProcStat {
			c.buf = make([]byte, 2*len(c.buf)) // more CPUs than NumCPU allows this process
			continue
		}
		return accts, at, err
	}
}

// maxProcStat bounds Read's buffer.
const maxProcStat = 1 << 20

// readAll reads the file into buf, from its start, until buf is full or
// the file ends.
func (c *CPUAccounts) readAll() (int, error) {
	n := 0
	for n < len(c.buf) {
		m, err := unix.Pread(c.fd, c.buf[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "read", Path: "/proc/stat", Err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

// Close releases the file; a later Read opens it again.
func (c *CPUAccounts) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return nil
	}
	err := unix.Close(c.fd)
	c.fd = -1
	return err
}
