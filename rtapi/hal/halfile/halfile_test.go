package halfile_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

func TestParse(t *testing.T) {
	t.Parallel()
	src := `# a servo loop
loadrt threads name1=servo period1=1000000
loadrt pid count=2   # two loops

addf pid.0.do-pid-calcs servo
addf pid.1.do-pid-calcs servo 1
net cmd siggen.0.sine => pid.0.command \
        pid.1.command
net fb pid.0.feedback <= motor.0.pos
linksp fb => pid.1.feedback
setp pid.0.Pgain 50
pid.0.Igain = 1.5
sets cmd "a b"
unlinkp pid.1.command
start
`
	cmds, err := halfile.Parse("servo.hal", strings.NewReader(src))
	require.NoError(t, err)
	var got []string
	for _, c := range cmds {
		got = append(got, c.Pos()+" "+c.String())
	}
	assert.Equal(t, []string{
		"servo.hal:2 loadrt threads name1=servo period1=1000000",
		"servo.hal:3 loadrt pid count=2",
		"servo.hal:5 addf pid.0.do-pid-calcs servo",
		"servo.hal:6 addf pid.1.do-pid-calcs servo 1",
		"servo.hal:7 net cmd siggen.0.sine pid.0.command pid.1.command",
		"servo.hal:9 net fb pid.0.feedback motor.0.pos",
		"servo.hal:10 linkps pid.1.feedback fb",
		"servo.hal:11 setp pid.0.Pgain 50",
		"servo.hal:12 setp pid.0.Igain 1.5",
		`servo.hal:13 sets cmd "a b"`,
		"servo.hal:14 unlinkp pid.1.command",
		"servo.hal:15 start",
	}, got)
}

func TestParseErrorsNameFileAndLine(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"setp a":                             `x.hal:1: setp takes 2 arguments, not 1`,
		"\n\nfrobnicate x":                   `x.hal:3: unknown command "frobnicate"`,
		"net sig =>":                         `x.hal:1: net: arrow "=>" needs a name on each side`,
		"addf f servo first":                 `x.hal:1: addf: position "first" is not an integer`,
		"loadrt pid count":                   `x.hal:1: loadrt pid: argument "count" is not KEY=VALUE`,
		`sets s "open`:                       `x.hal:1: unterminated quote`,
		"# ok\nnet a b \\":                   `x.hal:2: the file ends in a line continuation`,
		"unloadrt pid siggen":                `x.hal:1: unloadrt takes 1 arguments, not 2`,
		"loadusr":                            `x.hal:1: loadusr takes at least 1 arguments, not 0`,
		"waitusr a b":                        `x.hal:1: waitusr takes 1 arguments, not 2`,
		"start now":                          `x.hal:1: start takes 0 arguments, not 1`,
		"net s a => b\nsetp a 1 2":           `x.hal:2: setp takes 2 arguments, not 3`,
		"net \\\n s":                         `x.hal:1: net takes at least 2 arguments, not 1`,
		strings.Repeat("x", 70000):           `x.hal:1: line longer than`,
		"net s " + strings.Repeat("p ", 600): `x.hal:1: more than 512 words`,
	} {
		_, err := halfile.Parse("x.hal", strings.NewReader(src))
		require.Error(t, err, src)
		assert.ErrorContains(t, err, want)
		assert.ErrorIs(t, err, errs.Invalid)
		var pe *halfile.Error
		assert.True(t, errors.As(err, &pe))
	}
}

func TestParseArgsAndQuote(t *testing.T) {
	t.Parallel()
	c, err := halfile.ParseArgs([]string{"net", "x", "a", "<=>", "b"})
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "a", "b"}, c.Args)
	_, err = halfile.ParseArgs(nil)
	assert.ErrorIs(t, err, errs.Invalid)
	for _, s := range []string{"plain", "with space", `q"uote`, "#hash", ""} {
		c, ok, err := halfile.ParseLine("sets x " + halfile.Quote(s))
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, s, c.Args[1])
	}
}

// FuzzParse: any input gives commands or an *Error at a line of the
// input, never a panic; a command printed back parses to itself.
func FuzzParse(f *testing.F) {
	f.Add("loadrt pid count=1\nnet a b => c\n")
	f.Add("setp \"x\\\"y\" 1 # c\n\\\n")
	f.Add("a = 1\nlinksp s <= p\naddf f t -1")
	f.Fuzz(func(t *testing.T, src string) {
		cmds, err := halfile.Parse("f.hal", strings.NewReader(src))
		if err != nil {
			var pe *halfile.Error
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > strings.Count(src, "\n")+2 {
				t.Fatalf("error %v: not an *Error at a line of the input", err)
			}
			return
		}
		for _, c := range cmds {
			again, ok, err := halfile.ParseLine(c.String())
			if err != nil || !ok || again.Verb != c.Verb || strings.Join(again.Args, "\x00") != strings.Join(c.Args, "\x00") {
				t.Fatalf("%q printed as %q parses to %+v, %v", c.Args, c.String(), again, err)
			}
		}
	})
}

// A verb comes before "NAME = VALUE", as in halcmd's parse_cmd1: "sets =
// 0" sets the signal "=". Before, it was read as "setp sets 0".
func TestVerbBeforeNameEqualsValue(t *testing.T) {
	t.Parallel()
	c, ok, err := halfile.ParseLine("sets = 0")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "sets", c.Verb)
	assert.Equal(t, []string{"=", "0"}, c.Args)
	c, _, err = halfile.ParseLine("pid.0.Pgain = 1")
	require.NoError(t, err)
	assert.Equal(t, halfile.Command{Verb: "setp", Args: []string{"pid.0.Pgain", "1"}}, c)
}

// What the parser accepts prints back to text that parses to the same
// command; what cannot is refused. Before, "000000 = =>" gave "setp
// 000000 =>", which does not parse, and ParseLine took a newline into a
// word, which printed as two lines.
func TestPrintParsesBack(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"000000 = =>",
		"=> = 1",
		"a = <=>",
		"sets = 0",
		"x = =",
		"= = 1",
		"setp \"#a\" \"\"",
		"net \"a b\" c\\\\ \"d\\\"\"",
		"loadrt pid names=a=b",
	} {
		cmds, err := halfile.Parse("x.hal", strings.NewReader(src))
		if err != nil {
			assert.ErrorIs(t, err, errs.Invalid, src)
			continue
		}
		require.Len(t, cmds, 1, src)
		assertParsesBack(t, cmds)
	}
	_, err := halfile.ParseArgs([]string{"setp", "a", "=>"})
	assert.ErrorIs(t, err, errs.Invalid)
	_, _, err = halfile.ParseLine("sets a\nb 1")
	assert.ErrorIs(t, err, errs.Invalid)
}

// assertParsesBack prints cmds as a file, parses it, and wants the same
// commands, at lines 1, 2, ...
func assertParsesBack(t *testing.T, cmds []halfile.Command) {
	t.Helper()
	var text strings.Builder
	for _, c := range cmds {
		text.WriteString(c.String() + "\n")
	}
	again, err := halfile.Parse("again.hal", strings.NewReader(text.String()))
	if err != nil {
		t.Fatalf("%+v printed as %q does not parse: %v", cmds, text.String(), err)
	}
	if len(again) != len(cmds) {
		t.Fatalf("%+v printed as %q parses to %d commands", cmds, text.String(), len(again))
	}
	for i, c := range cmds {
		a := again[i]
		if a.Verb != c.Verb || !slices.Equal(a.Args, c.Args) || a.Line != i+1 {
			t.Fatalf("%s %q printed as %q parses to %s %q at line %d", c.Verb, c.Args, c.String(), a.Verb, a.Args, a.Line)
		}
	}
}

// Every name names.Check accepts prints bare (Quote leaves it alone, so a
// saved file reads the same in halcmd) and comes back from each verb
// that takes one.
func TestNamesPrintBare(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"pid.0.Pgain", "a=b", "µ-Ω", "start", "sets", "]", "a#b"} {
		checkNamePrintsBare(t, name)
	}
}

func checkNamePrintsBare(t *testing.T, name string) {
	t.Helper()
	if names.Check("signal", name) != nil {
		return
	}
	if q := halfile.Quote(name); q != name {
		t.Fatalf("Quote(%q) = %q: a valid name prints bare", name, q)
	}
	assertParsesBack(t, []halfile.Command{
		{Verb: "net", Args: []string{name, name + "x", "p"}},
		{Verb: "newsig", Args: []string{name, "float"}},
		{Verb: "sets", Args: []string{name, "1"}},
		{Verb: "setp", Args: []string{name, "1"}},
		{Verb: "linkps", Args: []string{name, "s"}},
		{Verb: "addf", Args: []string{name, name}},
		{Verb: "safep", Args: []string{name, name, "0"}},
		{Verb: "unlinkp", Args: []string{name}},
		{Verb: "show", Args: []string{"pin", name}},
	})
}

// FuzzRoundTrip: parse, print, parse is the identity. Its corpus keeps
// "000000 = =>", which FuzzParse found (.ci/run, 2026-12).
func FuzzRoundTrip(f *testing.F) {
	f.Add("loadrt pid count=1\nnet a b => c\nsets = 0\nx = 1\n")
	f.Add("setp \"#x\\\"y\" \"\"\nlinksp s <= p\naddf f t -1\nnet \"a b\" c\\\\ d \\\n e")
	f.Fuzz(func(t *testing.T, src string) {
		cmds, err := halfile.Parse("f.hal", strings.NewReader(src))
		if err != nil {
			return
		}
		assertParsesBack(t, cmds)
	})
}

// FuzzNamePrintsBare: a name names.Check accepts prints bare and parses
// back in every position save prints one.
func FuzzNamePrintsBare(f *testing.F) {
	for _, s := range []string{"pid.0.Pgain", "=", "=>", "#a", "a\\", "\"", "$HOME", "[A]B", "\u009b2J"} {
		f.Add(s)
	}
	f.Fuzz(checkNamePrintsBare)
}

// Issue 40, 6: loadusr, waitusr and unloadusr parse, their words kept
// as written, for the process reading the file to run (usercomp.Loader).
// Before, each was "not supported".
func TestParseUserVerbs(t *testing.T) {
	t.Parallel()
	cmds, err := halfile.Parse("x.hal", strings.NewReader(
		"loadusr -Wn panel halpanel -x \"a b\"\nloadusr -w sh runstreamer\nwaitusr panel\nunloadusr all\n"))
	require.NoError(t, err)
	require.Len(t, cmds, 4)
	assert.Equal(t, []string{"-Wn", "panel", "halpanel", "-x", "a b"}, cmds[0].Args)
	assert.Equal(t, `loadusr -Wn panel halpanel -x "a b"`, cmds[0].String())
	assert.Equal(t, "waitusr", cmds[2].Verb)
	assert.Equal(t, []string{"all"}, cmds[3].Args)
}

// Quoting, against LinuxCNC's tokenize (halcmd.c), which groups blanks
// inside '…' or "…" and keeps the quote characters in the word, and
// gives a backslash no meaning but at a line's end. gortapi keeps its
// own rule (docs/LINUXCNC.md, "halcmd verbs: quoting"): double quotes
// group and are removed, \" and \\ escape inside them. Every word below
// that differs is one LinuxCNC refuses (a value with quotes is no
// number), a quoted name (the same name wherever a file writes it
// alike) or a program's argument with its quotes left in.
func TestQuotingAgainstLinuxCNC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line     string
		gortapi  []string
		linuxcnc []string // what tokenize gives, for the record
	}{
		{`setp p.0.gain "1.5"`, []string{"p.0.gain", "1.5"}, []string{"p.0.gain", `"1.5"`}},
		{`sets s "a b"`, []string{"s", "a b"}, []string{"s", `"a b"`}},
		{`net "sig" a.in`, []string{"sig", "a.in"}, []string{`"sig"`, "a.in"}},
		{`setp a\b 1`, []string{`a\b`, "1"}, []string{`a\b`, "1"}},
		{`sets s "a\"b"`, []string{"s", `a"b`}, []string{"s", `"a\"b"`}},
		{`loadusr prog 'x y'`, []string{"prog", "'x", "y'"}, []string{"prog", "'x y'"}},
		{`setp p "#1" # c`, []string{"p", "#1"}, []string{"p", `"#1"`}},
	} {
		c, ok, err := halfile.ParseLine(tc.line)
		require.NoError(t, err, tc.line)
		require.True(t, ok)
		assert.Equal(t, tc.gortapi, c.Args, tc.line)
		for i, w := range tc.linuxcnc {
			if i < len(c.Args) && w != c.Args[i] {
				assert.True(t, strings.ContainsAny(w, `"'`) || strings.ContainsAny(c.Args[i], `"' `), "%s: %q", tc.line, w)
			}
		}
	}
}
