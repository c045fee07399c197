package flavors

import (
	"fmt"
	"strings"
)

// Toggle is a yes/no setting that can also say "not given": Auto, the
// zero value, leaves the choice to what comes next (for rtapi.Options: a
// flag, then the environment, then a default or detection; each field
// says what its Auto means). rtapi's Options and TaskSpec use it, and so
// does Config: a plain bool cannot tell "off" from "unset", so an
// explicit -rtapi.strict=false could not beat RTAPI_STRICT=1.
type Toggle int8

// Toggle values.
const (
	Auto Toggle = 0
	On   Toggle = 1
	Off  Toggle = -1
)

// String gives "auto", "on" or "off" (or "Toggle(n)" for a value that is
// none of them), the spelling Set reads back.
func (t Toggle) String() string {
	switch t {
	case Auto:
		return "auto"
	case On:
		return "on"
	case Off:
		return "off"
	}
	return fmt.Sprintf("Toggle(%d)", int8(t))
}

// Set parses "auto" (or ""), "on" or "off", and the spellings of
// strconv.ParseBool and yes/no, in any case. Anything else is an error
// matching ErrInvalid and t is left as it was. Set makes *Toggle a
// flag.Value.
func (t *Toggle) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		*t = Auto
	case "on", "1", "t", "true", "yes":
		*t = On
	case "off", "0", "f", "false", "no":
		*t = Off
	default:
		return fmt.Errorf("%q is not auto, on or off: %w", s, ErrInvalid)
	}
	return nil
}

// Valid reports whether t is Auto, On or Off.
func (t Toggle) Valid() bool { return t == Auto || t == On || t == Off }
