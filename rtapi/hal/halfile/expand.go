package halfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gortapi/gortapi/internal/errs"
)

// MaxSourceDepth bounds source nesting: the file given and 15 files
// below it, as LinuxCNC bounds #INCLUDE in INI files.
const MaxSourceDepth = 16

// Options makes Options.Parse read a .hal file as LinuxCNC's halcmd -f
// reads it: [SECTION]KEY, [SECTION](KEY), $VAR and $(VAR) are replaced in
// each line before it is cut into words, and source FILE reads FILE in
// place. The zero value has no INI file and reads the process's
// environment and files.
type Options struct {
	// INI finds the value of KEY in SECTION, the first where it repeats;
	// section "" ("[]KEY") means any section. nil: there is no INI file,
	// and every [SECTION]KEY is an error.
	INI func(section, key string) (string, bool)
	// Getenv finds an environment variable; nil: os.LookupEnv.
	Getenv func(name string) (string, bool)
	// Open opens a file a source command names; nil: os.Open.
	Open func(name string) (io.ReadCloser, error)
}

// ParseFile reads the .hal file name with Open and parses it as Parse.
func (o Options) ParseFile(name string) ([]Command, error) {
	f, err := o.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return o.Parse(name, f)
}

// Parse parses a .hal file as the package's Parse does, after replacing
// each line's references as LinuxCNC's halcmd (replace_vars): the text
// before the comment, inside quotes too, and not again in what was put
// in, so a value's blanks and quotes cut and group words. An unknown
// section, key or variable is an *Error at its FILE:LINE that names it.
// A source FILE line is replaced by FILE's commands, FILE taken relative
// to the directory of the file that names it ("~/" is $HOME); their
// errors carry the chain of source lines (Error.From, Command.From).
func (o Options) Parse(name string, r io.Reader) ([]Command, error) {
	var cmds []Command
	if err := o.parse(name, r, nil, &cmds); err != nil {
		return nil, err
	}
	return cmds, nil
}

func (o Options) open(name string) (io.ReadCloser, error) {
	if o.Open != nil {
		return o.Open(name)
	}
	return os.Open(name)
}

func (o Options) getenv(name string) (string, bool) {
	if o.Getenv != nil {
		return o.Getenv(name)
	}
	return os.LookupEnv(name)
}

func (o Options) parse(name string, r io.Reader, from []string, cmds *[]Command) error {
	return scan(name, r, func(first int, text string) error {
		return o.logical(name, first, text, from, cmds)
	})
}

// ParseLineAt parses one logical line, continuations already joined, of
// a file or stream name at line, as Parse would: a line read from a
// terminal (halrun -I). A source line gives the commands of its file,
// relative to name's directory; a blank line or a comment gives none.
func (o Options) ParseLineAt(name string, line int, text string) ([]Command, error) {
	var cmds []Command
	if err := o.logical(name, line, text, nil, &cmds); err != nil {
		return nil, err
	}
	return cmds, nil
}

func (o Options) logical(name string, first int, text string, from []string, cmds *[]Command) error {
	fail := func(err error) error { return &Error{File: name, Line: first, Err: err, From: from} }
	if strings.IndexByte(text, '\n') >= 0 {
		return fail(invalid("a newline inside one line"))
	}
	if len(text) > MaxLineLen {
		return fail(invalid("line longer than %d bytes", MaxLineLen))
	}
	line, err := o.substitute(code(text))
	if err != nil {
		return fail(err)
	}
	words, err := split(line, false)
	if err != nil {
		return fail(err)
	}
	if len(words) == 0 {
		return nil
	}
	if words[0] == "source" {
		if len(words) != 2 {
			return fail(invalid("source takes 1 argument, not %d", len(words)-1))
		}
		return o.source(name, first, words[1], from, cmds)
	}
	c, _, err := parseWords(words)
	if err != nil {
		return fail(err)
	}
	c.File, c.Line, c.From = name, first, from
	*cmds = append(*cmds, c)
	return nil
}

// source parses the file a source line at name:line names.
func (o Options) source(name string, line int, file string, from []string, cmds *[]Command) error {
	at := fmt.Sprintf("%s:%d", name, line)
	fail := func(err error) error { return &Error{File: name, Line: line, Err: err, From: from} }
	if strings.HasPrefix(file, "~/") {
		home, ok := o.getenv("HOME")
		if !ok {
			return fail(invalid("source %s: HOME is not set", file))
		}
		file = home + file[1:]
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(name), file)
	}
	if len(from)+1 >= MaxSourceDepth {
		return fail(invalid("source %s: more than %d files deep", file, MaxSourceDepth-1))
	}
	f, err := o.open(file)
	if err != nil {
		return fail(fmt.Errorf("source: %w", err))
	}
	defer f.Close()
	return o.parse(file, f, append([]string{at}, from...), cmds)
}

// code returns s up to its comment: a "#" that starts a word outside
// quotes, as split reads it.
func code(s string) string {
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
		if i < len(s) && s[i] == '#' {
			return s[:i]
		}
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' {
			if s[i] != '"' {
				i++
				continue
			}
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			i++ // closing quote
		}
	}
	return s
}

// varChars are the bytes of a name after $ or [SECTION] without
// parentheses, as halcmd's replace_vars.
const varChars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-_"

// maxVarName is halcmd's limit on a section or variable name (127).
const maxVarName = 127

// substitute replaces s's references as halcmd's replace_vars does.
func (o Options) substitute(s string) (string, error) {
	if strings.IndexAny(s, "$[") < 0 {
		return s, nil
	}
	var b strings.Builder
	for s != "" {
		i := strings.IndexAny(s, "$[")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		delim := s[i]
		s = s[i+1:]
		var section string
		if delim == '[' {
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return "", invalid("missing ']' after %q", "["+s)
			}
			if end > maxVarName {
				return "", invalid("section name longer than %d bytes", maxVarName)
			}
			section, s = s[:end], s[end+1:]
		}
		var name string
		if strings.HasPrefix(s, "(") {
			end := strings.IndexByte(s, ')')
			if end < 0 {
				return "", invalid("missing ')' after %q", s)
			}
			name, s = s[1:end], s[end+1:]
		} else {
			n := 0
			for n < len(s) && strings.IndexByte(varChars, s[n]) >= 0 {
				n++
			}
			name, s = s[:n], s[n:]
		}
		if name == "" {
			if delim == '$' {
				return "", invalid("empty variable name after '$'")
			}
			return "", invalid("empty key name after [%s]", section)
		}
		if len(name) > maxVarName {
			return "", invalid("variable name longer than %d bytes", maxVarName)
		}
		if delim == '$' {
			v, ok := o.getenv(name)
			if !ok {
				return "", fmt.Errorf("environment variable %s not found: %w", name, errs.Invalid)
			}
			b.WriteString(v)
		} else {
			if o.INI == nil {
				return "", invalid("INI variable [%s]%s: no INI file (halrun -i FILE, or INI_FILE_NAME)", section, name)
			}
			v, ok := o.INI(section, name)
			if !ok {
				return "", invalid("INI variable [%s]%s not found", section, name)
			}
			b.WriteString(v)
		}
		if b.Len() > MaxLineLen {
			return "", invalid("line longer than %d bytes after substitution", MaxLineLen)
		}
	}
	return b.String(), nil
}
