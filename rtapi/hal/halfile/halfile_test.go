package halfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/errs"
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
		"loadusr halui":                      `x.hal:1: loadusr is not supported`,
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
