// Package halprompt is the interactive prompt of halcmd -kf and halrun
// -I, as LinuxCNC's halcmd_main.c and halcmd_completion.c make it: on a
// terminal the "halcmd: " prompt ("halcmd+: " after a trailing
// backslash) with line editing, history and TAB completion of verbs and
// of the HAL's names (golang.org/x/term); elsewhere plain lines.
package halprompt

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Prompts of LinuxCNC's halcmd_main.c.
const (
	PromptInteractive = "halcmd: "
	PromptContinue    = "halcmd+: "
	PromptScript      = "%%\n" // printed as is: LinuxCNC prints its "%%\n" with %s
)

// LineReader gives the physical lines of an interactive input.
type LineReader interface {
	// ReadLine returns the next line without its newline; io.EOF at the
	// end (on a terminal also Ctrl-D on an empty line, and Ctrl-C).
	ReadLine() (string, error)
	// Continued says whether the next line continues this one (a
	// trailing backslash), for the prompt.
	Continued(bool)
}

// Plain reads lines from in (a file or pipe), writing prompt to out
// before each one when prompt is not "". A line longer than
// bufio.MaxScanTokenSize ends the input with bufio.ErrTooLong.
func Plain(in io.Reader, prompt string, out io.Writer) LineReader {
	return &plainReader{sc: bufio.NewScanner(in), prompt: prompt, out: out}
}

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

// Query runs one halcmd command on the HAL and returns what it printed:
// over the control socket (halcmd) or in the host's process (halrun).
type Query func(halfile.Command) (string, error)

// ReadNames reads what completion offers from the HAL's answers to show
// pin, show param, show sig, show funct, show comp, list thread and show
// alias, in their default (not script) formats.
func ReadNames(q Query) (Names, error) {
	var answers [7]string
	for i, args := range [][]string{{"show", "pin"}, {"show", "param"}, {"show", "sig"}, {"show", "funct"}, {"show", "comp"}, {"list", "thread"}, {"show", "alias"}} {
		text, err := q(halfile.Command{Verb: args[0], Args: args[1:]})
		if err != nil {
			return Names{}, err
		}
		answers[i] = text
	}
	return parseNames(answers[0], answers[1], answers[2], answers[3], answers[4], answers[5], answers[6]), nil
}

// TTY reads lines from a terminal with golang.org/x/term: line editing,
// history (up and down arrows) and TAB completion. The terminal is raw
// only while a line is read, so that commands print as on any terminal.
type TTY struct {
	fd int
	t  *term.Terminal
}

// NewTTY reads in, a terminal, echoing to out; names reads the HAL's
// names for completion at each TAB (an error offers nothing).
func NewTTY(in *os.File, out io.Writer, names func() (Names, error)) *TTY {
	r := &TTY{fd: int(in.Fd())}
	r.t = term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, PromptInteractive)
	if w, h, err := term.GetSize(r.fd); err == nil && w > 0 {
		r.t.SetSize(w, h)
	}
	r.t.AutoCompleteCallback = func(line string, pos int, key rune) (string, int, bool) {
		if key != '\t' {
			return "", 0, false
		}
		d, err := names()
		if err != nil {
			return line, pos, true // no HAL: nothing to offer
		}
		newLine, newPos, list := tab(line, pos, d)
		if len(list) > 0 {
			// x/term releases its lock around this callback: Write
			// prints above the prompt and draws the line again.
			r.t.Write([]byte(strings.Join(list, "  ") + "\n"))
		}
		return newLine, newPos, true
	}
	return r
}

// ReadLine reads one line, the terminal raw meanwhile.
func (r *TTY) ReadLine() (string, error) {
	old, err := term.MakeRaw(r.fd)
	if err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	defer term.Restore(r.fd, old)
	return r.t.ReadLine()
}

// Continued sets the next prompt: "halcmd+: " when on.
func (r *TTY) Continued(on bool) {
	if on {
		r.t.SetPrompt(PromptContinue)
	} else {
		r.t.SetPrompt(PromptInteractive)
	}
}

// tab completes the word before pos in line, as readline does with
// halcmd's completer: one candidate replaces the word, followed by a
// blank; several extend it to their common prefix, or, where that adds
// nothing, are returned in list to be shown.
func tab(line string, pos int, d Names) (newLine string, newPos int, list []string) {
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
