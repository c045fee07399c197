package sys

import (
	"fmt"
	"io"
	"os"
)

// LockedMemory returns the bytes the process has locked in RAM (VmLck):
// a caller about to lock on the program's behalf checks it first, since
// munlockall would undo the program's own lock.
func LockedMemory() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return 0, fmt.Errorf("read /proc/self/status: %w", err)
	}
	return ParseVmLck(b)
}
