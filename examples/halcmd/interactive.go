package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/examples/internal/halprompt"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/inifile"
)

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
	var rd halprompt.LineReader
	switch {
	case !cli.IsTerminal(in):
		rd = halprompt.Plain(in, "", out)
	case s.c.script:
		rd = halprompt.Plain(in, halprompt.PromptScript, out)
	default:
		rd = halprompt.NewTTY(in, out, s.names)
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

// names reads the host's names for completion.
func (s *session) names() (halprompt.Names, error) {
	if err := s.dial(); err != nil {
		return halprompt.Names{}, err
	}
	return halprompt.ReadNames(s.client.Do)
}
