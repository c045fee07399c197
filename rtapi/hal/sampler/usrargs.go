package sampler

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// UsrArgs is a halsampler or halstreamer command line, as ParseUsrArgs
// reads it.
type UsrArgs struct {
	// Channel is -c CHAN: 0 when not given.
	Channel int
	// Count is -n N: -1 when not given (run until the input or the host
	// ends, or a signal).
	Count int64
	// Tag is -t.
	Tag bool
	// File is the one FILE argument: "" when none is given.
	File string
	// ShmDir is -shm-dir, the directory of the host's segments: "" for
	// /dev/shm.
	ShmDir string
	// RT holds -rtapi.instance and -rtapi.shm-group (or -group), as
	// rtapi.RegisterShmFlags fills them in; Shm resolves them.
	RT rtapi.Options
}

// UsageError is a command line that LinuxCNC's halsampler or halstreamer
// refuses; its Error is their message, word for word (they then exit 1).
// It matches rtapi.ErrInvalid.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Is reports whether target is rtapi.ErrInvalid.
func (e *UsageError) Is(target error) bool { return target == rtapi.ErrInvalid }

// ParseUsrArgs reads args as LinuxCNC's sampler_usr.c (opts "cnt") and
// streamer_usr.c (opts "c") read theirs, and hands the other flags to fs,
// on which it registers rtapi.RegisterShmFlags's flags, -shm-dir and
// -group. Every refusal has been printed on fs's output when it returns.
//
// Options end at the first argument that does not start with '-'. An
// option whose letter is in opts is LinuxCNC's: -c CHAN and -n N take
// their value from the rest of the argument (-c0, -n10) or else from the
// next one (-c 0, -n 10), read as C's strtol (leading blanks and a sign
// allowed, nothing after the digits; -c into an int, -n into a long, as
// LinuxCNC's); -t sets Tag whatever follows it. Any other -NAME[=VALUE]
// or --NAME[=VALUE] whose NAME is one of fs's flags (the rtapi.
// RegisterShmFlags flags, -h, -help) is parsed by fs, its value from the
// next argument when it has no '=' and is not a boolean. One argument may
// follow the options: File.
//
// A refusal is a *UsageError with LinuxCNC's message: "ERROR: invalid
// channel number 'X'" (outside 0 to maxChannels-1), "ERROR: invalid sample
// count 'X'", "ERROR: unknown option 'X'", "ERROR: At most one filename
// may be specified". fs's own errors (a bad flag value, flag.ErrHelp) are
// returned as fs.Parse returns them.
func ParseUsrArgs(fs *flag.FlagSet, opts string, maxChannels int, args []string) (UsrArgs, error) {
	rt := rtapi.RegisterShmFlags(fs)
	dir := fs.String("shm-dir", "", "directory of the host's segments (default /dev/shm)")
	group := fs.String("group", "", "the same as -rtapi.shm-group")
	u, err := parseUsrArgs(fs, opts, maxChannels, args)
	var usage *UsageError
	if errors.As(err, &usage) {
		fmt.Fprintln(fs.Output(), usage.Msg)
	}
	u.ShmDir, u.RT = *dir, *rt
	u.RT.ShmGroup = cmp.Or(u.RT.ShmGroup, *group)
	return u, err
}

func parseUsrArgs(fs *flag.FlagSet, opts string, maxChannels int, args []string) (UsrArgs, error) {
	u := UsrArgs{Count: -1}
	var flags []string
	n := 0
	for ; n < len(args); n++ {
		a := args[n]
		if !strings.HasPrefix(a, "-") {
			break
		}
		opt := a[1:]
		if opt == "" || strings.IndexByte(opts, opt[0]) < 0 {
			name, _, hasValue := strings.Cut(strings.TrimPrefix(opt, "-"), "=")
			f := fs.Lookup(name)
			if f == nil && name != "h" && name != "help" {
				return u, &UsageError{fmt.Sprintf("ERROR: unknown option '%s'", opt)}
			}
			flags = append(flags, a)
			if f != nil && !hasValue && n+1 < len(args) {
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
					n++
					flags = append(flags, args[n])
				}
			}
			continue
		}
		if opt[0] == 't' {
			u.Tag = true
			continue
		}
		// LinuxCNC: the value follows the letter, or is the next argument
		// if there is one.
		cp := opt[1:]
		if cp == "" {
			if n++; n < len(args) {
				cp = args[n]
			}
		}
		v, whole := strtolWhole(cp)
		if opt[0] == 'n' {
			if !whole || v < 0 {
				return u, &UsageError{fmt.Sprintf("ERROR: invalid sample count '%s'", cp)}
			}
			u.Count = v
			continue
		}
		ch := int32(v) // strtol's long into LinuxCNC's int
		if !whole || ch < 0 || int(ch) >= maxChannels {
			return u, &UsageError{fmt.Sprintf("ERROR: invalid channel number '%s'", cp)}
		}
		u.Channel = int(ch)
	}
	if n < len(args) {
		if len(args) > n+1 {
			return u, &UsageError{"ERROR: At most one filename may be specified"}
		}
		u.File = args[n]
	}
	err := fs.Parse(flags)
	return u, err
}

// strtolWhole is C's strtol(s, &end, 10) (stream_parse.go's strtol after
// the blanks strtol skips) and whether *end is the string's end: no
// digits leave end at the start, so "" is whole and " " is not.
func strtolWhole(s string) (int64, bool) {
	b := []byte(s)
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	v, end := strtol(b, i)
	if end == i {
		end = 0
	}
	return v, end == len(b)
}

// Shm returns the options that name the host's segments: ShmDir, and
// the instance and group of RT resolved as every rtapi program's (the
// flag, else $RTAPI_INSTANCE and $RTAPI_SHM_GROUP). It opens and closes
// an RT that runs no task.
func (u UsrArgs) Shm() (shm.Options, error) {
	o := u.RT
	o.Flavor, o.LockMemory = "posix", rtapi.Off
	rt, err := rtapi.Open(o)
	if err != nil {
		return shm.Options{}, err
	}
	instance := rt.Instance()
	if err := rt.Close(); err != nil {
		return shm.Options{}, err
	}
	// RT keeps the resolved group to itself; resolve it as it does.
	group := cmp.Or(o.ShmGroup, os.Getenv("RTAPI_SHM_GROUP"))
	return shm.Options{Dir: u.ShmDir, Instance: instance, Group: group}, nil
}
