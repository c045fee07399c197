package inifile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/rtapi/hal/inifile"
)

// files serves name -> content to Parse.
func files(m map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		s, ok := m[name]
		if !ok {
			return nil, os.ErrNotExist
		}
		return []byte(s), nil
	}
}

func TestLoadMill(t *testing.T) {
	t.Parallel()
	f, err := inifile.Load("testdata/mill.ini")
	require.NoError(t, err)
	for _, c := range []struct{ sec, key, want string }{
		{"EMCMOT", "BASE_PERIOD", "50000"},                                     // no blanks around "="
		{"EMCMOT", "SERVO_PERIOD", "1000000"},                                  // the first of a repeated key, across merged sections
		{"EMCMOT", "COMM_TIMEOUT", "1.0   ; not a comment: LinuxCNC keeps it"}, // no inline comments
		{"EMC", "MACHINE", "test mill"},
		{"HAL", "HALFILE", "core.hal"},
		{"JOINT_0", "P", "50"},              // leading blanks on header and key
		{"JOINT_0", "D", "0.5 1.5"},         // a continuation keeps the blank before "\", adds none
		{"JOINT_1", "P", "60"},              // from #INCLUDE, relative to mill.ini's directory
		{"JOINT_1", "NAME", "\"x\tjoint\""}, // quotes kept, escapes resolved
		{"", "P", "50"},                     // no section: the first anywhere
		{"", "MAX_LIMIT", "200"},
	} {
		got, ok := f.Find(c.sec, c.key)
		assert.True(t, ok, "[%s]%s", c.sec, c.key)
		assert.Equal(t, c.want, got, "[%s]%s", c.sec, c.key)
	}
	assert.Equal(t, []string{"1000000", "2000000"}, f.FindAll("EMCMOT", "SERVO_PERIOD"))
	assert.Equal(t, []string{"core.hal", "axes.hal"}, f.FindAll("HAL", "HALFILE"))
	_, ok := f.Find("EMCMOT", "NOPE")
	assert.False(t, ok)
	_, ok = f.Find("NOPE", "P")
	assert.False(t, ok)
	e := f.Entries[len(f.Entries)-1]
	assert.Equal(t, "testdata/mill.ini:24 [EMCMOT]SERVO_PERIOD", e.File+":"+itoa(e.Line)+" ["+e.Section+"]"+e.Key)
	for _, e := range f.Entries {
		if e.Key == "D" {
			assert.Equal(t, 19, e.Line, "a continued line counts at its last line, as LinuxCNC")
		}
		if e.Section == "JOINT_1" {
			assert.Equal(t, "testdata/joint1.inc", e.File)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestValues(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`a\nb`:              "a\nb",
		`\101\x42\u00e9`:    "ABé",
		`\ud83d\ude00`:      "😀",
		`\U0001F600`:        "😀",
		`c:\dir`:            `c:\dir`, // unknown escape kept
		`a\\b`:              `a\b`,
		`\18`:               "\x018",
		"x \t ":             "x",
		"":                  "",
		`"quoted"`:          `"quoted"`,
		"v # not a comment": "v # not a comment",
	} {
		f, err := inifile.Parse("v.ini", files(map[string]string{"v.ini": "[S]\nK = " + in + "\n"}))
		require.NoError(t, err, in)
		got, ok := f.Find("S", "K")
		assert.True(t, ok)
		assert.Equal(t, want, got, in)
	}
}

func TestLineEndings(t *testing.T) {
	t.Parallel()
	for in, found := range map[string]bool{
		"[S]\nK=v\n":     true,
		"[S]\r\nK=v\r\n": true,
		"[S]\rK=v\r":     false, // one line: a header with trailing content, as LinuxCNC
		"[S]\nK=v":       true,  // no newline at the end
	} {
		f, err := inifile.Parse("e.ini", files(map[string]string{"e.ini": in}))
		require.NoError(t, err, "%q", in)
		v, ok := f.Find("S", "K")
		assert.Equal(t, found, ok, "%q", in)
		if found {
			assert.Equal(t, "v", v)
		}
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"K=v\n":                    "r.ini:1: key \"K\" before any [SECTION]",
		"[S\n":                     "r.ini:1: section header without ']'",
		"[S]\n[ ]\n":               "r.ini:2: empty section name",
		"[S-1]\n":                  `r.ini:1: section "S-1": a name is`,
		"[1S]\n":                   `r.ini:1: section "1S" starts with a digit`,
		"[S]\nKEY\n":               `r.ini:2: "KEY": no '=' after the key`,
		"[S]\n= v\n":               "r.ini:2: no key before '='",
		"[S]\nA.B = v\n":           `r.ini:2: key "A.B": a name is`,
		"[S]\n9K = v\n":            `r.ini:2: key "9K" starts with a digit`,
		"[S]\nK = a \\\n":          "r.ini:2: the last line has a continuation",
		"[S]\nK = \\x4\n":          `r.ini:2: key "K": a short hex escape`,
		"[S]\nK = \\000\n":         `r.ini:2: key "K": an octal NUL`,
		"[S]\nK = \\ud800\n":       `r.ini:2: key "K": missing low surrogate`,
		"[S]\nK = \\U00110000\n":   `r.ini:2: key "K": invalid code point`,
		"[S]\nK = \\xff\n":         `r.ini:2: key "K": the value is not valid UTF-8`,
		"[S]\nK = a\x00\n":         `r.ini:2: key "K": a NUL character`,
		"#INCLUDE\n":               "r.ini:1: missing file name after #INCLUDE",
		"#INCLUDEx\n":              "r.ini:1: missing file name after #INCLUDE",
		"#INCLUDE r.ini\n":         "r.ini:1: #INCLUDE r.ini: it includes itself",
		"[S]\n#INCLUDE gone.inc\n": "r.ini:2: #INCLUDE gone.inc: file does not exist",
	} {
		_, err := inifile.Parse("r.ini", files(map[string]string{"r.ini": in}))
		require.Error(t, err, "%q", in)
		assert.ErrorContains(t, err, want, "%q", in)
		var ie *inifile.Error
		assert.True(t, errors.As(err, &ie))
		if !strings.Contains(want, "does not exist") {
			assert.ErrorIs(t, err, errs.Invalid, "%q", in)
		}
	}
	// " #INCLUDE" (not at the start of the line) is a comment, as LinuxCNC.
	f, err := inifile.Parse("r.ini", files(map[string]string{"r.ini": " #INCLUDE gone\n[S]\nK=1\n"}))
	require.NoError(t, err)
	assert.Len(t, f.Entries, 1)
}

func TestIncludeDepth(t *testing.T) {
	t.Parallel()
	m := map[string]string{}
	chain := func(n int) {
		for i := 0; i < n; i++ {
			m["d/"+itoa(i)+".inc"] = "#INCLUDE " + itoa(i+1) + ".inc\n"
		}
		m["d/"+itoa(n)+".inc"] = "[S]\nK=deep\n"
	}
	chain(14) // the top file and 14 nested includes: LinuxCNC's limit
	f, err := inifile.Parse("d/0.inc", files(m))
	require.NoError(t, err)
	v, _ := f.Find("S", "K")
	assert.Equal(t, "deep", v)
	chain(15)
	_, err = inifile.Parse("d/0.inc", files(m))
	assert.ErrorContains(t, err, "d/14.inc:1: #INCLUDE d/15.inc: more than 15 files deep")
}

func TestLoadReal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.ini"), []byte("[S]\nK=1\n"), 0o600))
	f, err := inifile.Load(filepath.Join(dir, "a.ini"))
	require.NoError(t, err)
	assert.Len(t, f.Entries, 1)
	_, err = inifile.Load(filepath.Join(dir, "none.ini"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// FuzzParse: any input parses or is an *Error, in bounded time, and every
// entry it keeps is a valid identifier pair with a valid UTF-8 value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"[S]\nK = v\n", "[S]\nK=a \\\n b\n", "#INCLUDE x\n", "[S]\nK=\\u00e9\\ud83d\\ude00\\101\n",
		";c\n#c\n[A]\n[A]\nK=1\nK=2\n", "[S]\rK=v\r", "K=v", "[S]\nK=\\", "[]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fl, err := inifile.Parse("f.ini", files(map[string]string{"f.ini": s, "x": s}))
		if err != nil {
			var ie *inifile.Error
			if !errors.As(err, &ie) {
				t.Fatalf("%q: not an *Error: %v", s, err)
			}
			return
		}
		for _, e := range fl.Entries {
			if e.Key == "" || e.Section == "" || strings.ContainsAny(e.Key+e.Section, " =[]") {
				t.Fatalf("%q: entry %+v", s, e)
			}
			if v, ok := fl.Find(e.Section, e.Key); !ok || strings.IndexByte(v, 0) >= 0 {
				t.Fatalf("%q: %+v not found or holds NUL", s, e)
			}
		}
	})
}
