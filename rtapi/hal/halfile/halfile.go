// Package halfile parses LinuxCNC's .hal files: one command per line,
// words separated by blanks, "#" starting a comment, a backslash at the
// end of a line continuing it, double quotes grouping a word with blanks.
// rtapi/hal executes what it returns (HAL.Exec, HAL.Load); examples/halcmd
// sends the same commands to a running host.
//
//	loadrt threads name1=servo period1=1000000
//	loadrt pid count=1
//	addf pid.0.do-pid-calcs servo
//	net pos-cmd siggen.0.sine => pid.0.command
//	setp pid.0.Pgain 50
//	safep servo pid.0.enable FALSE # gortapi: the servo thread's safe state
//	start
//
// safep THREAD PIN VALUE is gortapi's own: when THREAD faults or stops,
// its safe state sets PIN to VALUE (hal.HAL.SafeP).
//
// loadusr, waitusr and unloadusr parse here but run in the process that
// reads the file (rtapi/hal/usercomp's Loader: halrun, halcmd), which
// starts and ends programs; hal.HAL.Exec, and so the control socket,
// does not know them.
//
// Parse checks each command's verb and argument count, not whether what
// it names exists. Every error names FILE:LINE. Parse reads nothing but
// its input and takes words as written; Options.Parse reads a file as
// LinuxCNC's halcmd -f, with [SECTION]KEY from an INI file
// (rtapi/hal/inifile), $VAR from the environment and source FILE.
// docs/HALFILE.md compares each rule with LinuxCNC's.
package halfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gortapi/gortapi/internal/errs"
)

// Limits on input: a hostile file costs bounded time and memory.
const (
	MaxLineLen = 64 << 10 // bytes in one logical line, continuations joined
	MaxArgs    = 512      // words in one command
	MaxLines   = 1 << 20  // physical lines in one file
)

// Command is one parsed command, in one form per verb: arrows dropped,
// "NAME = VALUE" as setp, linksp as linkps with its arguments swapped.
// String prints it back to a line that parses to the same Command.
type Command struct {
	File string
	Line int // first physical line of the command, from 1
	Verb string
	Args []string
	// From holds the "FILE:LINE" of each source command that led to File,
	// innermost first; nil in the file given to Parse.
	From []string
}

// Pos is "FILE:LINE", as error messages begin.
func (c Command) Pos() string { return fmt.Sprintf("%s:%d", c.File, c.Line) }

// String prints the command back as a line of a .hal file.
func (c Command) String() string {
	words := []string{c.Verb}
	for _, a := range c.Args {
		words = append(words, Quote(a))
	}
	return strings.Join(words, " ")
}

// Quote quotes a word that holds blanks, quotes or a leading "#".
func Quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\r\"\\") && !strings.HasPrefix(s, "#") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Error is a parse or execution error at one line of a file; it matches
// rtapi.ErrInvalid, or what Err matches.
type Error struct {
	File string
	Line int
	Err  error
	// From holds the "FILE:LINE" of each source command that led to File,
	// innermost first.
	From []string
}

func (e *Error) Error() string {
	if len(e.From) == 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v (sourced from %s)", e.File, e.Line, e.Err, strings.Join(e.From, ", from "))
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// At wraps err with the command's position.
func (c Command) At(err error) error {
	if err == nil {
		return nil
	}
	return &Error{File: c.File, Line: c.Line, Err: err, From: c.From}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, errs.Invalid)...)
}

// arity: the fewest and most arguments of each verb (-1: no limit).
var arity = map[string][2]int{
	"loadrt":  {1, -1},
	"addf":    {2, 3},
	"delf":    {1, 2},
	"net":     {2, -1},
	"newsig":  {2, 2},
	"delsig":  {1, 1},
	"linkps":  {2, 2},
	"linksp":  {2, 2},
	"setp":    {2, 2},
	"sets":    {2, 2},
	"getp":    {1, 1},
	"gets":    {1, 1},
	"unlinkp": {1, 1},
	"start":   {0, 0},
	"stop":    {0, 0},
	"show":    {0, -1}, // [KIND [-tTYPE] [PATTERN...]]
	"save":    {0, 2},  // [KIND] [FILE]
	"safep":   {3, 3},
	"list":    {1, -1},
	"ptype":   {1, 1},
	"stype":   {1, 1},
	"status":  {0, 1},
	"help":    {0, 1},
	"echo":    {0, 0},
	"unecho":  {0, 0},
	"alias":   {3, 3},
	"unalias": {2, 2},
	"lock":    {0, 1},
	"unlock":  {0, 1},
	// unload's user-space part runs where unloadusr does (usercomp).
	"unloadrt": {1, 1},
	"unload":   {1, 1},
	// Run by the process reading the file (package usercomp's Loader:
	// halrun, halcmd), not by hal.HAL.Exec.
	"loadusr":   {1, -1},
	"waitusr":   {1, 1},
	"unloadusr": {1, 1},
}

// Verbs lists the verbs Parse accepts.
func Verbs() []string {
	out := make([]string, 0, len(arity))
	for v := range arity {
		out = append(out, v)
	}
	return out
}

func isArrow(s string) bool { return s == "=>" || s == "<=" || s == "<=>" }

// Parse reads a .hal file named name in errors, and returns every
// command or the first error (an *Error naming FILE:LINE). Its words are
// taken as written: Options.Parse substitutes [SECTION]KEY and $VAR and
// reads source files, as LinuxCNC's halcmd -f does.
func Parse(name string, r io.Reader) ([]Command, error) {
	var cmds []Command
	err := scan(name, r, func(first int, text string) error {
		c, ok, err := ParseLine(text)
		if err != nil {
			return &Error{File: name, Line: first, Err: err}
		}
		if ok {
			c.File, c.Line = name, first
			cmds = append(cmds, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cmds, nil
}

// scan cuts r into logical lines, continuations joined, and gives each
// with its first physical line to line; it stops at line's first error.
func scan(name string, r io.Reader, line func(first int, text string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLineLen)
	var joined strings.Builder
	first, n := 0, 0
	for sc.Scan() {
		n++
		if n > MaxLines {
			return &Error{File: name, Line: n, Err: invalid("more than %d lines", MaxLines)}
		}
		text := sc.Text()
		if joined.Len() == 0 {
			first = n
		}
		if strings.HasSuffix(text, "\\") && !strings.HasPrefix(strings.TrimSpace(text), "#") {
			joined.WriteString(strings.TrimSuffix(text, "\\"))
			joined.WriteByte(' ')
			if joined.Len() > MaxLineLen {
				return &Error{File: name, Line: first, Err: invalid("line longer than %d bytes", MaxLineLen)}
			}
			continue
		}
		joined.WriteString(text)
		err := line(first, joined.String())
		joined.Reset()
		if err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = invalid("line longer than %d bytes", MaxLineLen)
		}
		return &Error{File: name, Line: n + 1, Err: err}
	}
	if joined.Len() > 0 {
		return &Error{File: name, Line: first, Err: invalid("the file ends in a line continuation")}
	}
	return nil
}

// ParseLine parses one logical line. ok is false for a blank line or a
// comment. The Command has no File or Line. A newline in s is refused:
// its Command would print back as two lines.
func ParseLine(s string) (c Command, ok bool, err error) {
	if strings.IndexByte(s, '\n') >= 0 {
		return Command{}, false, invalid("a newline inside one line")
	}
	words, err := split(s, true)
	if err != nil || len(words) == 0 {
		return Command{}, false, err
	}
	return parseWords(words)
}

// ParseArgs parses a command given as words (halcmd's command line). A
// word may hold a newline here, unlike in a file; such a command has no
// one-line form (halctl.Client refuses to send it).
func ParseArgs(words []string) (Command, error) {
	if len(words) == 0 {
		return Command{}, invalid("no command")
	}
	c, _, err := parseWords(words)
	return c, err
}

func parseWords(words []string) (Command, bool, error) {
	if len(words) > MaxArgs {
		return Command{}, false, invalid("more than %d words", MaxArgs)
	}
	verb, args := words[0], words[1:]
	lim, known := arity[verb]
	if !known && len(args) == 2 && args[0] == "=" {
		// NAME = VALUE, only where NAME is no verb (halcmd's parse_cmd1):
		// "sets = 0" sets the signal "=". It is checked as setp is, so
		// that it prints back as a setp that parses.
		verb, args = "setp", []string{verb, args[1]}
		lim, known = arity[verb]
	}
	if !known {
		if verb == "source" {
			return Command{}, false, invalid("source is read where a file is parsed with its directory (halfile.Options.Parse: halrun, halcmd -f)")
		}
		return Command{}, false, invalid("unknown command %q", verb)
	}
	switch verb {
	case "net", "linkps", "linksp":
		var kept []string
		for i, a := range args {
			if isArrow(a) {
				if i == 0 || i == len(args)-1 {
					return Command{}, false, invalid("%s: arrow %q needs a name on each side", verb, a)
				}
				continue
			}
			kept = append(kept, a)
		}
		args = kept
	}
	if len(args) < lim[0] || (lim[1] >= 0 && len(args) > lim[1]) {
		return Command{}, false, invalid("%s takes %s, not %d", verb, argCount(lim), len(args))
	}
	for _, a := range args {
		if isArrow(a) {
			return Command{}, false, invalid("%s: unexpected arrow %q", verb, a)
		}
	}
	switch verb {
	case "linksp":
		verb, args = "linkps", []string{args[1], args[0]}
	case "addf":
		if len(args) == 3 {
			if _, err := strconv.Atoi(args[2]); err != nil {
				return Command{}, false, invalid("addf: position %q is not an integer", args[2])
			}
		}
	case "loadrt":
		for _, a := range args[1:] {
			if k, _, ok := strings.Cut(a, "="); !ok || k == "" {
				return Command{}, false, invalid("loadrt %s: argument %q is not KEY=VALUE", args[0], a)
			}
		}
	}
	return Command{Verb: verb, Args: args}, true, nil
}

func argCount(lim [2]int) string {
	switch {
	case lim[1] < 0:
		return fmt.Sprintf("at least %d arguments", lim[0])
	case lim[0] == lim[1]:
		return fmt.Sprintf("%d arguments", lim[0])
	}
	return fmt.Sprintf("%d to %d arguments", lim[0], lim[1])
}

// split cuts a line into words: blanks separate, a word starting with "#"
// ends the line where comments is set, double quotes group (with \" and
// \\ inside).
func split(s string, comments bool) ([]string, error) {
	var words []string
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
		if i >= len(s) || (comments && s[i] == '#') {
			break
		}
		var w strings.Builder
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' {
			if s[i] != '"' {
				w.WriteByte(s[i])
				i++
				continue
			}
			i++ // opening quote
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '\\' && i+1 < len(s) {
					w.WriteByte(s[i+1])
					i += 2
					continue
				}
				i++
				if c == '"' {
					closed = true
					break
				}
				w.WriteByte(c)
			}
			if !closed {
				return nil, invalid("unterminated quote")
			}
		}
		words = append(words, w.String())
		if len(words) > MaxArgs {
			return nil, invalid("more than %d words", MaxArgs)
		}
	}
	return words, nil
}
