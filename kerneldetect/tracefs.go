package kerneldetect

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
)

// FindTracefs returns the directory of the kernel's tracing files
// (trace_marker, tracing_on, instances/) as fsys's proc/self/mounts lists
// it: a tracefs mount, else the tracing directory of a debugfs mount. It
// returns "" and no error when neither is mounted, and the read error
// when the mount table cannot be read. The directory is absolute on the
// live system: open it with the os package, not through fsys.
func FindTracefs(fsys fs.FS) (string, error) {
	if fsys == nil {
		return "", ErrInvalid
	}
	b, err := readCapped(fsys, "proc/self/mounts", maxSmallFile)
	if err != nil {
		return "", err
	}
	return ParseTracefs(b), nil
}

// ParseTracefs returns the tracing directory named by a mount table in
// the format of /proc/self/mounts: the first tracefs mount point, else the
// first debugfs mount point followed by "/tracing", else "". Octal escapes
// in mount points (\040 for a space) are decoded; a line that does not
// parse is skipped.
func ParseTracefs(mounts []byte) string {
	debugfs := ""
	for line := range bytes.SplitSeq(mounts, []byte{'\n'}) {
		f := strings.Fields(string(line))
		if len(f) < 3 || !strings.HasPrefix(f[1], "/") {
			continue
		}
		switch f[2] {
		case "tracefs":
			return unescapeMount(f[1])
		case "debugfs":
			if debugfs == "" {
				debugfs = strings.TrimSuffix(unescapeMount(f[1]), "/") + "/tracing"
			}
		}
	}
	return debugfs
}

// unescapeMount decodes the kernel's \ooo escapes of a mount point.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// remedyTracefs says how to make the kernel's trace usable.
const remedyTracefs = "only for a kernel trace around late wake-ups (rtapi TaskSpec.TraceMark, latency-test -b): " +
	"mount -t tracefs nodev /sys/kernel/tracing, and run as root"

// checkTracefs says whether the trace hook can write the kernel's trace:
// tracefs (or debugfs/tracing) mounted, and its trace_marker writable.
func (d *detector) checkTracefs() Check {
	const mounts = "proc/self/mounts"
	b, err := readCapped(d.fsys, mounts, maxSmallFile)
	if err != nil {
		return warn(CheckTracefs, mounts+" "+describeErr(err)+": could not tell", remedyTracefs)
	}
	dir := ParseTracefs(b)
	if dir == "" {
		return warn(CheckTracefs, mounts+": no tracefs or debugfs mounted", remedyTracefs)
	}
	marker := strings.TrimPrefix(dir, "/") + "/trace_marker"
	ev := mounts + ": tracing at " + dir
	fi, found := exists(d.fsys, marker)
	if !found {
		return warn(CheckTracefs, ev+"; "+marker+" missing or not accessible to uid "+fmt.Sprint(d.r.Process.UID), remedyTracefs)
	}
	if d.r.Process.UID > 0 && fi.Mode().Perm()&0o002 == 0 && !d.r.Process.HasCap(1) /* CAP_DAC_OVERRIDE */ {
		return warn(CheckTracefs, ev+"; uid "+fmt.Sprint(d.r.Process.UID)+" may not be able to write "+marker, remedyTracefs)
	}
	return ok(CheckTracefs, ev+"; trace_marker writable")
}
