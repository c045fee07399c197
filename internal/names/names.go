// Package names holds the one rule for names from outside (task, thread,
// function, pin, signal): one that passes Check can go unchanged into a
// metrics label, a shared-memory table, a thread name or a log line.
package names

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/gortapi/gortapi/internal/errs"
)

// MaxLen is the longest name in bytes: it fits, with its NUL, in the
// 48-byte name fields of shared-memory tables (hal.NameLen).
const MaxLen = 47

// Error reports a name Check refused; it matches errs.Invalid.
type Error struct {
	Kind   string // what was named: "task", "thread", "function"
	Name   string // the name, as given
	Reason string // what is wrong with it
}

func (e *Error) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("a %s needs a name", e.Kind)
	}
	return fmt.Sprintf("%s name %q %s", e.Kind, e.Name, e.Reason)
}

// Unwrap gives errs.Invalid.
func (e *Error) Unwrap() error { return errs.Invalid }

// Check returns nil when name, of kind ("task", ...), is 1 to MaxLen bytes
// of UTF-8, all graphic and none a space; else an *Error saying why. It
// does not allocate for a valid name.
func Check(kind, name string) error {
	switch {
	case name == "":
		return &Error{Kind: kind}
	case len(name) > MaxLen:
		return &Error{Kind: kind, Name: name, Reason: fmt.Sprintf("is %d bytes, longer than %d", len(name), MaxLen)}
	case !utf8.ValidString(name):
		return &Error{Kind: kind, Name: name, Reason: "is not valid UTF-8"}
	}
	for _, r := range name {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) {
			return &Error{Kind: kind, Name: name, Reason: fmt.Sprintf("contains a space or control character (%U)", r)}
		}
	}
	return nil
}
