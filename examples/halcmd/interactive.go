package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/inifile"
)

// Prompts of LinuxCNC's halcmd_main.c.
const (
	promptInteractive = "halcmd: "
	promptContinue    = "halcmd+: "
	promptScript      = "%%\n" // printed as is: LinuxCNC prints its "%%\n" with %s
)

// lineReader gives the physical lines of halcmd's standard input.
type lineReader interface {
	// ReadLine returns the next line without its newline; io.EOF at the end.
	ReadLine() (string, error)
	// Continued says whether the next line continues this one (a
	// trailing backslash), for the prompt.
	Continued(bool)
}

// stream runs the commands of in, line by line, as LinuxCNC's halcmd -f
// without a FILE: a line ending in a backslash continues on the next,
// quit or exit (any case) ends, echo (or -e) echoes each line on stderr
// as "(LINE)<echo>: TEXT". On a terminal the prompt is "halcmd: " with
// line editing, history and TAB completion (-s: "%%" on its own line,
// none of those). A failed command is reported as <stdin>:LINE: and
// ends halcmd, unless -k; it then exits 1 at the end (errFailed).
func (s *session) stream(out, errOut io.Writer, in *os.File) error {
	var o halfile.Options
	if ini := cmp.Or(s.c.ini, os.Getenv("INI_FILE_NAME")); ini != "" {
		f, err := inifile.Load(ini)
		if err != nil {
			return err
		}
		o.INI = f.Find
	}
	var rd lineReader
	switch {
	case !cli.IsTerminal(in):
		rd = &plainReader{sc: bufio.NewScanner(in)}
	case s.c.script:
		rd = &plainReader{sc: bufio.NewScanner(in), prompt: promptScript, out: out}
	default:
		t, err := newTTYReader(in, out, s.names)
		if err != nil {
			return err
		}
		rd = t
	}
	var joined strings.Builder
	n, first, failed := 0, 0, false
	for {
		text, err := rd.ReadLine()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n++
		if joined.Len() == 0 {
			first = n
		}
		if strings.HasSuffix(text, "\\") && joined.Len()+len(text) <= halfile.MaxLineLen {
			joined.WriteString(strings.TrimSuffix(text, "\\"))
			rd.Continued(true)
			continue
		}
		rd.Continued(false)
		joined.WriteString(text)
		line := joined.String()
		joined.Reset()
		if s.c.echo {
			fmt.Fprintf(errOut, "(%d)<echo>: %s\n", n, line)
		}
		if f := strings.Fields(line); len(f) > 0 && (strings.EqualFold(f[0], "quit") || strings.EqualFold(f[0], "exit")) {
			break
		}
		cmds, err := o.ParseLineAt("<stdin>", first, line)
		for _, c := range cmds {
			if err = s.exec(out, c); err != nil {
				if !errors.As(err, new(*halfile.Error)) {
					err = c.At(err)
				}
				break
			}
		}
		if err != nil {
			fmt.Fprintln(errOut, err)
			failed = true
			if !s.c.keepGoing {
				break
			}
		}
	}
	if failed {
		return errFailed
	}
	return nil
}

// plainReader reads lines from a file or pipe, writing prompt before each.
type plainReader struct {
	sc     *bufio.Scanner
	prompt string
	out    io.Writer
}

func (p *plainReader) ReadLine() (string, error) {
	if p.prompt != "" {
		io.WriteString(p.out, p.prompt)
	}
	if p.sc.Scan() {
		return p.sc.Text(), nil
	}
	return "", cmp.Or(p.sc.Err(), io.EOF)
}

func (p *plainReader) Continued(bool) {}

// ttyReader reads lines from a terminal with golang.org/x/term: line
// editing, history (up and down arrows) and TAB completion. The
// terminal is raw only while a line is read, so that commands print as
// on any terminal.
type ttyReader struct {
	fd int
	t  *term.Terminal
}

// newTTYReader reads in, echoing to out; names reads the host's names
// for completion.
func newTTYReader(in *os.File, out io.Writer, names func() (halNames, error)) (*ttyReader, error) {
	r := &ttyReader{fd: int(in.Fd())}
	r.t = term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, promptInteractive)
	if w, h, err := term.GetSize(r.fd); err == nil && w > 0 {
		r.t.SetSize(w, h)
	}
	r.t.AutoCompleteCallback = func(line string, pos int, key rune) (string, int, bool) {
		if key != '\t' {
			return "", 0, false
		}
		d, err := names()
		if err != nil {
			return line, pos, true // no host: nothing to offer
		}
		newLine, newPos, list := tab(line, pos, d)
		if len(list) > 0 {
			// x/term releases its lock around this callback: Write
			// prints above the prompt and draws the line again.
			r.t.Write([]byte(strings.Join(list, "  ") + "\n"))
		}
		return newLine, newPos, true
	}
	return r, nil
}

func (r *ttyReader) ReadLine() (string, error) {
	old, err := term.MakeRaw(r.fd)
	if err != nil {
		return "", fmt.Errorf("halcmd: terminal: %w", err)
	}
	defer term.Restore(r.fd, old)
	return r.t.ReadLine()
}

func (r *ttyReader) Continued(on bool) {
	if on {
		r.t.SetPrompt(promptContinue)
	} else {
		r.t.SetPrompt(promptInteractive)
	}
}

// tab completes the word before pos in line, as readline does with
// halcmd's completer: one candidate replaces the word, followed by a
// blank; several extend it to their common prefix, or, where that adds
// nothing, are returned in list to be shown.
func tab(line string, pos int, d halNames) (newLine string, newPos int, list []string) {
	start := wordStart(line[:pos])
	word := line[start:pos]
	cands := complete(line[:pos], d)
	var repl string
	switch len(cands) {
	case 0:
		return line, pos, nil
	case 1:
		repl = cands[0] + " "
	default:
		repl = commonPrefix(cands)
		if repl == word {
			return line, pos, cands
		}
	}
	return line[:start] + repl + line[pos:], start + len(repl), nil
}

// names reads the host's names for completion.
func (s *session) names() (halNames, error) {
	if err := s.dial(); err != nil {
		return halNames{}, err
	}
	var answers [7]string
	for i, args := range [][]string{{"show", "pin"}, {"show", "param"}, {"show", "sig"}, {"show", "funct"}, {"show", "comp"}, {"list", "thread"}, {"show", "alias"}} {
		text, err := s.client.Do(halfile.Command{Verb: args[0], Args: args[1:]})
		if err != nil {
			return halNames{}, err
		}
		answers[i] = text
	}
	return parseNames(answers[0], answers[1], answers[2], answers[3], answers[4], answers[5], answers[6]), nil
}
