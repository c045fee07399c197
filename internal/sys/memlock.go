package sys

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var errNoVmLck = errors.New("no VmLck line in /proc/self/status")

// ParseVmLck returns the VmLck field of /proc/PID/status text in bytes.
func ParseVmLck(status []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		value, ok := strings.CutPrefix(sc.Text(), "VmLck:")
		if !ok {
			continue
		}
		num, unit, _ := strings.Cut(strings.TrimSpace(value), " ")
		kb, err := strconv.ParseInt(num, 10, 64)
		if err != nil || kb < 0 || kb > 1<<40 || strings.TrimSpace(unit) != "kB" {
			return 0, fmt.Errorf("VmLck %q: not a size in kB", strings.TrimSpace(value))
		}
		return kb << 10, nil
	}
	return 0, errNoVmLck
}
