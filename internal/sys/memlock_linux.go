package sys

import (
	"fmt"
	"io"
	"os"
)

// LockedMemory returns how many bytes of the process are locked in RAM
// (VmLck in /proc/self/status): more than zero when the program called
// mlock or mlockall itself. munlockall would undo such a lock, so a
// caller that locks memory on the program's behalf checks this first.
func LockedMemory() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	// Pseudo-files report no size: read with a cap instead.
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return 0, fmt.Errorf("read /proc/self/status: %w", err)
	}
	return ParseVmLck(b)
}
