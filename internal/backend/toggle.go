package backend

import "fmt"

// Toggle is a yes/no setting of Config that can also say "not given"
// (Auto, the zero value): rtapi.Toggle, converted by number.
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
