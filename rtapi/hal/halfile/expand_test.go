package halfile_test

import (
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/inifile"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func printed(cmds []halfile.Command) []string {
	var out []string
	for _, c := range cmds {
		s := c.Pos() + " " + c.String()
		if c.From != nil {
			s += " <- " + strings.Join(c.From, " <- ")
		}
		out = append(out, s)
	}
	return out
}

// The mill's .hal file takes its period and gains from its INI file, as
// a LinuxCNC configuration does; halcmd refused "[EMCMOT]SERVO_PERIOD"
// before as "not an integer" (halrun's TestINIPeriod).
func TestOptionsParseMill(t *testing.T) {
	t.Parallel()
	ini, err := inifile.Load("testdata/mill/mill.ini")
	require.NoError(t, err)
	o := halfile.Options{INI: ini.Find, Getenv: env(map[string]string{"DEADBAND": "0.0", "FF0": "1"})}
	cmds, err := o.ParseFile("testdata/mill/mill.hal")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"testdata/mill/mill.hal:2 loadrt threads name1=servo period1=1000000",
		"testdata/mill/mill.hal:3 loadrt pid count=1",
		"testdata/mill/mill.hal:4 addf pid.0.do-pid-calcs servo",
		"testdata/mill/mill.hal:5 setp pid.0.Pgain 50",
		"testdata/mill/mill.hal:6 setp pid.0.Igain 0.5",
		"testdata/mill/mill.hal:7 setp pid.0.maxoutput 200",
		"testdata/mill/mill.hal:8 newsig name s32",
		`testdata/mill/mill.hal:9 sets name "bench mill"`,
		"testdata/mill/mill.hal:10 setp pid.0.deadband 0.00",
		"testdata/mill/mill.hal:11 setp pid.0.FF0 1",
		"testdata/mill/sub/joints.hal:2 net j0-cmd pid.0.command <- testdata/mill/mill.hal:12",
		"testdata/mill/sub/more.hal:1 setp pid.0.Dgain 2 <- testdata/mill/sub/joints.hal:3 <- testdata/mill/mill.hal:12",
		"testdata/mill/mill.hal:13 start",
	}, printed(cmds))
}

func parseWith(o halfile.Options, src string) ([]halfile.Command, error) {
	return o.Parse("x.hal", strings.NewReader(src))
}

// Each rule of halcmd's replace_vars, on one line.
func TestSubstitution(t *testing.T) {
	t.Parallel()
	ini := map[string]map[string]string{
		"S":   {"K": "v", "TWO": "a b", "Q": `"a b"`, "HASH": "#x"},
		"T":   {"K": "t"},
		"A.B": {"K": "dotted"},
	}
	o := halfile.Options{
		INI: func(s, k string) (string, bool) {
			if s == "" {
				for _, sec := range []string{"S", "T"} {
					if v, ok := ini[sec][k]; ok {
						return v, true
					}
				}
				return "", false
			}
			v, ok := ini[s][k]
			return v, ok
		},
		Getenv: env(map[string]string{"V": "e", "A.B": "dots", "SP": "x y", "W X": "paren"}),
	}
	for src, want := range map[string]string{
		"sets s [S]K":            "sets s v",
		"sets s [S]K.more":       "", // "." is a name byte: [S]K.more is looked up
		"sets s [S](K).more":     "sets s v.more",
		"sets s pre[T]K-x":       "", // "-" too
		"sets s pre[T](K)_x":     "sets s pret_x",
		"sets s []K":             "sets s v", // any section, the first
		"sets s [A.B]K":          "sets s dotted",
		"sets s $V":              "sets s e",
		"sets s $A.B":            "sets s dots",
		"sets s $(V)x":           "sets s ex",
		"sets s $(W X)":          "sets s paren",
		`sets s "[S]K $V"`:       `sets s "v e"`, // inside quotes too
		"sets [S]TWO":            "sets a b",     // a value's blank cuts words
		"sets s [S]Q":            `sets s "a b"`, // a value's quotes group
		"sets s [S]HASH":         `sets s "#x"`,  // a value's "#" is no comment
		"sets s v # [NONE]X $NO": "sets s v",     // the comment is not looked up
		"sets s $SP":             "",             // two words: sets takes 2
	} {
		cmds, err := parseWith(o, src)
		if want == "" {
			assert.Error(t, err, src)
			continue
		}
		require.NoError(t, err, src)
		require.Len(t, cmds, 1, src)
		assert.Equal(t, want, cmds[0].String(), src)
	}
}

func TestSubstitutionErrorsNameIt(t *testing.T) {
	t.Parallel()
	o := halfile.Options{
		INI:    func(s, k string) (string, bool) { return "1", s == "S" && k == "K" },
		Getenv: env(map[string]string{"V": "1"}),
	}
	for src, want := range map[string]string{
		"\nsetp p [S]NOPE":                    "x.hal:2: INI variable [S]NOPE not found",
		"setp p [NOPE]K":                      "x.hal:1: INI variable [NOPE]K not found",
		"setp p $NOPE":                        "x.hal:1: environment variable NOPE not found",
		"setp p $(NO PE)":                     "x.hal:1: environment variable NO PE not found",
		"setp p $":                            "x.hal:1: empty variable name after '$'",
		"setp p $/x":                          "x.hal:1: empty variable name after '$'",
		"setp p [S]":                          "x.hal:1: empty key name after [S]",
		"setp p [S":                           `x.hal:1: missing ']' after "[S"`,
		"setp p $(V":                          `x.hal:1: missing ')' after "(V"`,
		"setp p [S](K":                        `x.hal:1: missing ')' after "(K"`,
		"setp p $" + strings.Repeat("v", 128): "x.hal:1: variable name longer than 127 bytes",
		"setp p [" + strings.Repeat("s", 128) + "]K": "x.hal:1: section name longer than 127 bytes",
		"net a \\\n b [S]X":                          "x.hal:1: INI variable [S]X not found",
	} {
		_, err := parseWith(o, src)
		require.Error(t, err, src)
		assert.ErrorContains(t, err, want, src)
		assert.ErrorIs(t, err, errs.Invalid, src)
	}
	_, err := parseWith(halfile.Options{}, "loadrt threads period1=[EMCMOT]BASE_PERIOD")
	assert.ErrorContains(t, err, "x.hal:1: INI variable [EMCMOT]BASE_PERIOD: no INI file (halrun -i FILE, or INI_FILE_NAME)")
}

// The zero Options reads the process's environment.
func TestSubstitutionZeroOptionsReadsEnvironment(t *testing.T) {
	t.Setenv("GORTAPI_HALFILE_TEST", "42")
	cmds, err := parseWith(halfile.Options{}, "setp p $GORTAPI_HALFILE_TEST")
	require.NoError(t, err)
	assert.Equal(t, "setp p 42", cmds[0].String())
}

// Parse, and the lines halcmd sends to a host, take "$" and "[" as
// written: a Command prints back to a line that parses to itself.
func TestParseTakesWordsAsWritten(t *testing.T) {
	t.Parallel()
	cmds, err := halfile.Parse("x.hal", strings.NewReader("sets s $X[S]K"))
	require.NoError(t, err)
	assert.Equal(t, "sets s $X[S]K", cmds[0].String())
	_, err = halfile.Parse("x.hal", strings.NewReader("source other.hal"))
	assert.ErrorContains(t, err, "x.hal:1: source is read where a file is parsed")
}

// files serves name -> content as Options.Open.
func files(m map[string]string) func(string) (io.ReadCloser, error) {
	return func(name string) (io.ReadCloser, error) {
		s, ok := m[name]
		if !ok {
			return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
		}
		return io.NopCloser(strings.NewReader(s)), nil
	}
}

func TestSourceErrorsShowTheChain(t *testing.T) {
	t.Parallel()
	o := halfile.Options{Getenv: env(map[string]string{"HOME": "/home/op"}), Open: files(map[string]string{
		"cfg/top.hal":        "setp a 1\nsource mid/mid.hal\n",
		"cfg/mid/mid.hal":    "# mid\n\nsource ../bottom.hal\n",
		"cfg/bottom.hal":     "setp b 2\nfrobnicate\n",
		"cfg/missing.hal":    "source gone.hal\n",
		"cfg/self.hal":       "source self.hal\n",
		"cfg/args.hal":       "source a b\n",
		"/home/op/tilde.hal": "setp c 3\n",
		"cfg/tilde.hal":      "source ~/tilde.hal\n",
		"cfg/abs.hal":        "source /home/op/tilde.hal\n",
	})}
	_, err := o.ParseFile("cfg/top.hal")
	require.Error(t, err)
	assert.EqualError(t, err, `cfg/bottom.hal:2: unknown command "frobnicate": invalid argument (sourced from cfg/mid/mid.hal:3, from cfg/top.hal:2)`)
	var pe *halfile.Error
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, []string{"cfg/mid/mid.hal:3", "cfg/top.hal:2"}, pe.From)

	_, err = o.ParseFile("cfg/missing.hal")
	assert.ErrorContains(t, err, "cfg/missing.hal:1: source: open cfg/gone.hal: file does not exist")
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, err = o.ParseFile("cfg/self.hal")
	assert.ErrorContains(t, err, "cfg/self.hal:1: source cfg/self.hal: more than 15 files deep: invalid argument (sourced from cfg/self.hal:1, from")
	_, err = o.ParseFile("cfg/args.hal")
	assert.ErrorContains(t, err, "cfg/args.hal:1: source takes 1 argument, not 2")

	for _, f := range []string{"cfg/tilde.hal", "cfg/abs.hal"} {
		cmds, err := o.ParseFile(f)
		require.NoError(t, err)
		assert.Equal(t, []string{"/home/op/tilde.hal:1 setp c 3 <- " + f + ":1"}, printed(cmds))
	}
}

// 15 nested sources are read; a 16th is refused.
func TestSourceDepth(t *testing.T) {
	t.Parallel()
	m := map[string]string{}
	chain := func(n int) {
		for i := range n {
			m[string(rune('a'+i))+".hal"] = "source " + string(rune('a'+i+1)) + ".hal\n"
		}
		m[string(rune('a'+n))+".hal"] = "setp deep 1\n"
	}
	o := halfile.Options{Open: files(m)}
	chain(15)
	cmds, err := o.ParseFile("a.hal")
	require.NoError(t, err)
	assert.Len(t, cmds, 1)
	assert.Len(t, cmds[0].From, 15)
	chain(16)
	_, err = o.ParseFile("a.hal")
	assert.ErrorContains(t, err, "p.hal:1: source q.hal: more than 15 files deep")
}

// An execution error of a sourced command names the chain too.
func TestCommandAtCarriesTheChain(t *testing.T) {
	t.Parallel()
	c := halfile.Command{File: "b.hal", Line: 3, Verb: "setp", From: []string{"a.hal:1"}}
	assert.EqualError(t, c.At(errors.New("no pin")), "b.hal:3: no pin (sourced from a.hal:1)")
}

// FuzzSubstitute: any line with references either parses to commands
// or is an *Error; nothing panics or loops.
func FuzzSubstitute(f *testing.F) {
	for _, s := range []string{"setp p [S]K", "setp p \"a #b\" # c", "net a b#c \\\n c", "setp p \"x\\\"#\" #y", "sets s $(V)x", "sets s \"[S](K)\" # $NO", "$", "[", "[S](", "$(", "source x"} {
		f.Add(s)
	}
	o := halfile.Options{
		INI:    func(s, k string) (string, bool) { return s + "=" + k, len(k)%2 == 0 },
		Getenv: func(k string) (string, bool) { return "[" + k, len(k)%3 == 0 },
		Open:   files(map[string]string{"x": "setp a $x\n"}),
	}
	f.Fuzz(func(t *testing.T, s string) {
		cmds, err := o.Parse("f.hal", strings.NewReader(s))
		if !strings.ContainsAny(s, "$[") && !strings.Contains(s, "source") {
			// Nothing to substitute: the comment is cut where Parse cuts it.
			plain, perr := halfile.Parse("f.hal", strings.NewReader(s))
			if (err == nil) != (perr == nil) || (err == nil && !slices.EqualFunc(cmds, plain, func(a, b halfile.Command) bool {
				return a.String() == b.String() && a.Line == b.Line
			})) {
				t.Fatalf("%q: Options.Parse %v, %v; Parse %v, %v", s, printed(cmds), err, printed(plain), perr)
			}
		}
		if err != nil {
			var pe *halfile.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%q: not an *Error: %v", s, err)
			}
			return
		}
		for _, c := range cmds {
			if c.File == "" || c.Line < 1 || c.Verb == "" {
				t.Fatalf("%q: %+v", s, c)
			}
		}
	})
}

// ParseLineAt gives one line's commands at the line it is told.
func TestParseLineAt(t *testing.T) {
	t.Parallel()
	o := halfile.Options{INI: func(s, k string) (string, bool) { return "7", s == "S" }, Open: files(map[string]string{"sub.hal": "setp b 1\nsetp c 2\n"})}
	cmds, err := o.ParseLineAt("<stdin>", 4, "setp a [S]K # comment")
	require.NoError(t, err)
	assert.Equal(t, []string{"<stdin>:4 setp a 7"}, printed(cmds))
	cmds, err = o.ParseLineAt("<stdin>", 5, "source sub.hal")
	require.NoError(t, err)
	assert.Equal(t, []string{"sub.hal:1 setp b 1 <- <stdin>:5", "sub.hal:2 setp c 2 <- <stdin>:5"}, printed(cmds))
	cmds, err = o.ParseLineAt("<stdin>", 6, "  # nothing")
	require.NoError(t, err)
	assert.Empty(t, cmds)
	_, err = o.ParseLineAt("<stdin>", 7, "setp a [T]K")
	assert.EqualError(t, err, "<stdin>:7: INI variable [T]K not found: invalid argument")
}
