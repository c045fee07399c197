// Package names holds the one rule for names from outside (task, thread,
// function, pin, signal): one that passes Check can go unchanged into a
// metrics label, a shared-memory table, a thread name or a log line.
package names

import (
	"fmt"
	"strings"
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

// Special holds the characters a name may not contain because a .hal
// file reads them specially, in gortapi's parser (rtapi/hal/halfile) or
// in LinuxCNC's halcmd: quotes group words, '#' starts a comment (in
// halcmd anywhere outside quotes), '$' and '[' start an environment or
// INI substitution (in halcmd even inside quotes), and a backslash
// continues a line or escapes inside quotes.
const Special = "\"'#$[\\"

// Check returns nil when name, of kind ("task", ...), is 1 to MaxLen bytes
// of UTF-8, all graphic, none a space, none of Special, and not a word
// halcmd reads as syntax ("=", "=>", "<=", "<=>"); else an *Error saying
// why. A name that passes prints bare in a .hal file and reads back as
// itself (halfile.Quote leaves it alone), and Escape leaves it alone. It
// does not allocate for a valid name.
func Check(kind, name string) error {
	switch {
	case name == "":
		return &Error{Kind: kind}
	case len(name) > MaxLen:
		return &Error{Kind: kind, Name: name, Reason: fmt.Sprintf("is %d bytes, longer than %d", len(name), MaxLen)}
	case !utf8.ValidString(name):
		return &Error{Kind: kind, Name: name, Reason: "is not valid UTF-8"}
	case name == "=" || name == "=>" || name == "<=" || name == "<=>":
		return &Error{Kind: kind, Name: name, Reason: "is halcmd syntax (\"=\" or an arrow), which a .hal file cannot hold as a name"}
	}
	for _, r := range name {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) {
			return &Error{Kind: kind, Name: name, Reason: fmt.Sprintf("contains a space or control character (%U)", r)}
		}
		if r < utf8.RuneSelf && strings.IndexByte(Special, byte(r)) >= 0 {
			return &Error{Kind: kind, Name: name, Reason: fmt.Sprintf("contains %q, which .hal files read specially", r)}
		}
	}
	return nil
}

// Escape returns name as it may go to a terminal, a log or a file: a
// name that passes Check unchanged, and anything else (a name read from
// shared memory) with each byte that is not valid UTF-8 as \xNN, each
// space or non-graphic rune as \xNN, \uNNNN or \UNNNNNNNN, and a
// backslash as \\. What it returns holds only graphic, non-space runes.
// It does not allocate when it returns name unchanged.
func Escape(name string) string {
	i := 0
	for i < len(name) {
		r, n := utf8.DecodeRuneInString(name[i:])
		if escaped(r, n) {
			break
		}
		i += n
	}
	if i == len(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 8)
	b.WriteString(name[:i])
	for i < len(name) {
		r, n := utf8.DecodeRuneInString(name[i:])
		switch {
		case !escaped(r, n):
			b.WriteString(name[i : i+n])
		case r == '\\':
			b.WriteString(`\\`)
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, name[i])
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	return b.String()
}

// escaped says whether Escape rewrites the rune r of n bytes.
func escaped(r rune, n int) bool {
	return (r == utf8.RuneError && n == 1) || r == '\\' || !unicode.IsGraphic(r) || unicode.IsSpace(r)
}
