// Package inifile reads a LinuxCNC INI file the way LinuxCNC's IniFile
// does (src/emc/ini/inifile.cc), so that a .hal file's [SECTION]KEY
// references (rtapi/hal/halfile) find the values LinuxCNC's halcmd finds.
//
//	[EMCMOT]
//	BASE_PERIOD = 50000   # not a comment: the value is "50000   # not a comment"
//	; a comment line
//	# another
//	[JOINT_0]
//	P = 1000 \
//	    500               <- a backslash at the end of a line continues it
//	#INCLUDE joint1.inc   <- relative to this file's directory
//
// Comments are whole lines whose first non-blank is "#" or ";"; nothing
// after a value is a comment. A line is KEY = VALUE, blanks around both
// trimmed; VALUE takes C escapes (\n, \t, \x41, \101, \u00e9, \U0001F600,
// \\); an unknown escape is kept as written. Sections of one name merge.
// A key may repeat: Find returns the first, as LinuxCNC's iniFindString.
// #INCLUDE FILE at the start of a line reads FILE in its place, 15 levels
// deep at most. Section and key names are identifiers (letters, digits,
// "_", not starting with a digit). A line that breaks a rule is an *Error
// naming FILE:LINE, as LinuxCNC refuses the file.
package inifile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/gortapi/gortapi/internal/errs"
)

// Limits on input: a hostile file costs bounded time and memory.
const (
	MaxFileSize     = 16 << 20 // bytes in one file
	MaxEntries      = 1 << 20  // KEY = VALUE lines in all files together
	MaxIncludeDepth = 16       // LinuxCNC's MAX_INCLUDE_DEPTH: the top file and 14 nested #INCLUDEs
)

// Entry is one KEY = VALUE line.
type Entry struct {
	File    string // the file it came from, as the #INCLUDE chain named it
	Line    int    // its line (the last physical line of a continued one), from 1
	Section string
	Key     string
	Value   string // trimmed, escapes resolved
}

// File is a parsed INI file with what it included.
type File struct {
	Name    string
	Entries []Entry // in the order read, includes in place
}

// Error is a line of an INI file that LinuxCNC refuses; it matches
// rtapi.ErrInvalid, or what Err matches (a file that cannot be read).
type Error struct {
	File string
	Line int // 0: the file as a whole
	Err  error
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, errs.Invalid)...)
}

// Load reads and parses the INI file name and the files it includes.
func Load(name string) (*File, error) {
	return Parse(name, readCapped)
}

func readCapped(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, invalid("larger than %d bytes", MaxFileSize)
	}
	return b, nil
}

// Parse parses the INI file name, reading it and each file an #INCLUDE
// names with read. It returns the first error, an *Error.
func Parse(name string, read func(name string) ([]byte, error)) (*File, error) {
	p := &parser{read: read, section: -1}
	f := &File{Name: name}
	p.file = f
	if err := p.parseFile(name, 0, ""); err != nil {
		return nil, err
	}
	return f, nil
}

// Find returns the value of the first KEY in SECTION, or of the first KEY
// in any section where section is "" (halcmd's "[]KEY").
func (f *File) Find(section, key string) (string, bool) {
	for _, e := range f.Entries {
		if e.Key == key && (section == "" || e.Section == section) {
			return e.Value, true
		}
	}
	return "", false
}

// FindAll returns every value of KEY in SECTION, in order.
func (f *File) FindAll(section, key string) []string {
	var out []string
	for _, e := range f.Entries {
		if e.Key == key && (section == "" || e.Section == section) {
			out = append(out, e.Value)
		}
	}
	return out
}

type parser struct {
	read     func(string) ([]byte, error)
	file     *File
	sections []string
	section  int // index into sections; -1 before the first header
	stack    []string
}

const blanks = " \t\v\f\r\n"

func isID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func (p *parser) parseFile(name string, fromLine int, from string) error {
	data, err := p.read(name)
	if err != nil {
		if from != "" {
			return &Error{File: from, Line: fromLine, Err: fmt.Errorf("#INCLUDE %s: %w", name, err)}
		}
		return &Error{File: name, Err: err}
	}
	p.stack = append(p.stack, name)
	defer func() { p.stack = p.stack[:len(p.stack)-1] }()
	return p.parseContent(string(data), name)
}

// parseContent cuts lines as IniFileContent::parseContent does: each line
// right-trimmed, a trailing backslash joining the next one (with no blank
// added), the joined line counted at its last physical line.
func (p *parser) parseContent(content, name string) error {
	line := 1
	var joined strings.Builder
	for pos := 0; pos < len(content); {
		eol := strings.IndexByte(content[pos:], '\n')
		if eol < 0 || pos+eol == len(content)-1 {
			joined.WriteString(content[pos:])
			s := strings.TrimRight(joined.String(), blanks)
			if strings.HasSuffix(s, `\`) {
				return &Error{File: name, Line: line, Err: invalid("the last line has a continuation")}
			}
			return p.parseLine(s, name, line)
		}
		this := strings.TrimRight(content[pos:pos+eol], blanks)
		pos += eol + 1
		if strings.HasSuffix(this, `\`) {
			joined.WriteString(this[:len(this)-1])
			if joined.Len() > MaxFileSize {
				return &Error{File: name, Line: line, Err: invalid("line longer than %d bytes", MaxFileSize)}
			}
			line++
			continue
		}
		joined.WriteString(this)
		if err := p.parseLine(joined.String(), name, line); err != nil {
			return err
		}
		joined.Reset()
		line++
	}
	return nil
}

func (p *parser) parseLine(s, name string, line int) error {
	fail := func(format string, args ...any) error {
		return &Error{File: name, Line: line, Err: invalid(format, args...)}
	}
	if strings.HasPrefix(s, "#INCLUDE") {
		if len(s) <= 8 || (s[8] != ' ' && s[8] != '\t') {
			return fail("missing file name after #INCLUDE")
		}
		arg := strings.Trim(s[8:], blanks)
		if strings.HasPrefix(arg, "~/") {
			home, ok := os.LookupEnv("HOME")
			if !ok {
				return fail("cannot expand %q: HOME is not set", arg)
			}
			arg = home + arg[1:]
		}
		if !strings.HasPrefix(arg, "/") {
			if i := strings.LastIndexByte(name, '/'); i >= 0 {
				arg = name[:i+1] + arg
			}
		}
		for _, s := range p.stack {
			if s == arg {
				return fail("#INCLUDE %s: it includes itself", arg)
			}
		}
		if len(p.stack)+1 >= MaxIncludeDepth {
			return fail("#INCLUDE %s: more than %d files deep", arg, MaxIncludeDepth-1)
		}
		return p.parseFile(arg, line, name)
	}
	start := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune(blanks, r) })
	if start < 0 || s[start] == '#' || s[start] == ';' {
		return nil
	}
	if s[start] == '[' {
		end := strings.IndexByte(s[start:], ']')
		if end < 0 {
			return fail("section header without ']'")
		}
		end += start
		sect := strings.Trim(s[start+1:end], blanks)
		switch {
		case sect == "":
			return fail("empty section name")
		case !isID(sect):
			return fail("section %q: a name is letters, digits and '_'", sect)
		case sect[0] >= '0' && sect[0] <= '9':
			return fail("section %q starts with a digit", sect)
		}
		p.section = -1
		for i, n := range p.sections {
			if n == sect {
				p.section = i // LinuxCNC merges sections of one name
			}
		}
		if p.section < 0 {
			p.sections = append(p.sections, sect)
			p.section = len(p.sections) - 1
		}
		return nil // what follows "]" is ignored, as LinuxCNC (which warns)
	}
	eq := strings.IndexByte(s[start:], '=')
	if eq < 0 {
		return fail("%q: no '=' after the key", s[start:])
	}
	if eq == 0 {
		return fail("no key before '='")
	}
	eq += start
	key := strings.TrimRight(s[start:eq], blanks)
	if !isID(key) {
		return fail("key %q: a name is letters, digits and '_'", key)
	}
	if key[0] >= '0' && key[0] <= '9' {
		return fail("key %q starts with a digit", key)
	}
	if p.section < 0 {
		return fail("key %q before any [SECTION]", key)
	}
	value, err := unescape(strings.Trim(s[eq+1:], blanks))
	if err != nil {
		return fail("key %q: %v", key, err)
	}
	if !utf8.ValidString(value) {
		return fail("key %q: the value is not valid UTF-8", key)
	}
	if len(p.file.Entries) >= MaxEntries {
		return fail("more than %d keys", MaxEntries)
	}
	p.file.Entries = append(p.file.Entries, Entry{File: name, Line: line,
		Section: p.sections[p.section], Key: key, Value: value})
	return nil
}

func hexValue(s string) (uint32, bool) {
	var v uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint32(c)
	}
	return v, true
}

// unescape resolves a value's escapes as IniFileContent::processValue.
// The value is trimmed, so it never ends in a lone backslash.
func unescape(v string) (string, error) {
	if strings.IndexByte(v, 0) >= 0 {
		return "", fmt.Errorf("a NUL character")
	}
	if strings.IndexByte(v, '\\') < 0 {
		return v, nil
	}
	var b bytes.Buffer
	for pos := 0; pos < len(v); pos++ {
		ch := v[pos]
		if ch != '\\' {
			b.WriteByte(ch)
			continue
		}
		left := len(v) - pos - 1
		if left < 1 {
			return "", fmt.Errorf("a '\\' at the end")
		}
		n := v[pos+1]
		switch n {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\':
			b.WriteByte('\\')
		case '0', '1', '2', '3':
			x := uint32(n - '0')
			if left >= 2 && v[pos+2] >= '0' && v[pos+2] <= '7' {
				x = x<<3 + uint32(v[pos+2]-'0')
				if left >= 3 && v[pos+3] >= '0' && v[pos+3] <= '7' {
					x = x<<3 + uint32(v[pos+3]-'0')
					pos++
				}
				pos++
			}
			if x == 0 {
				return "", fmt.Errorf("an octal NUL character")
			}
			b.WriteByte(byte(x))
		case 'x':
			if left < 3 {
				return "", fmt.Errorf("a short hex escape")
			}
			x, ok := hexValue(v[pos+2 : pos+4])
			if !ok {
				return "", fmt.Errorf("invalid hex %q", v[pos+2:pos+4])
			}
			if x == 0 {
				return "", fmt.Errorf("a hex NUL character")
			}
			b.WriteByte(byte(x))
			pos += 2
		case 'u':
			if left < 5 {
				return "", fmt.Errorf("a short \\u escape")
			}
			x, ok := hexValue(v[pos+2 : pos+6])
			if !ok {
				return "", fmt.Errorf("invalid hex %q in \\u", v[pos+2:pos+6])
			}
			if x == 0 {
				return "", fmt.Errorf("a \\u NUL character")
			}
			if x >= 0xd800 && x <= 0xdfff {
				if x >= 0xdc00 {
					return "", fmt.Errorf("invalid high surrogate u%04X", x)
				}
				if left < 11 || v[pos+6] != '\\' || v[pos+7] != 'u' {
					return "", fmt.Errorf("missing low surrogate")
				}
				lo, ok := hexValue(v[pos+8 : pos+12])
				if !ok {
					return "", fmt.Errorf("invalid hex %q in a low surrogate", v[pos+8:pos+12])
				}
				if lo < 0xdc00 || lo > 0xdfff {
					return "", fmt.Errorf("invalid low surrogate u%04X", lo)
				}
				x = 0x10000 + (x&0x3ff)<<10 + lo&0x3ff
				pos += 6
			}
			b.WriteRune(rune(x))
			pos += 4
		case 'U':
			if left < 9 {
				return "", fmt.Errorf("a short \\U escape")
			}
			x, ok := hexValue(v[pos+2 : pos+10])
			if !ok {
				return "", fmt.Errorf("invalid hex %q in \\U", v[pos+2:pos+10])
			}
			if x == 0 {
				return "", fmt.Errorf("a \\U NUL character")
			}
			if x > 0x10ffff {
				return "", fmt.Errorf("invalid code point U%08X", x)
			}
			if x >= 0xd800 && x <= 0xdfff {
				return "", fmt.Errorf("the value is not valid UTF-8") // LinuxCNC encodes it, then refuses it
			}
			b.WriteRune(rune(x))
			pos += 8
		default:
			b.WriteByte('\\') // LinuxCNC warns and keeps it
			b.WriteByte(n)
		}
		pos++
	}
	return b.String(), nil
}
