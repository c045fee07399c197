package names

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/gortapi/gortapi/internal/errs"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"servo":                         true,
		"axis.0.pos-cmd":                true,
		"µ-thread_Ω":                    true,
		strings.Repeat("x", MaxLen):     true,
		strings.Repeat("x", MaxLen+1):   false,
		strings.Repeat("é", MaxLen/2+1): false,
		"":                              false,
		"axis\xff":                      false,
		"a b":                           false,
		"a\tb":                          false,
		"a\nb":                          false,
		"a\x1b[2J":                      false,
		"a\x7f":                         false,
		"a\u0085":                       false,
		"a\u00a0b":                      false,
		"a\u200bb":                      false,
		"a\u202eb":                      false,
		// What a .hal file cannot hold as a name: before, each was
		// accepted, and save wrote a file that did not load back.
		"=":         false,
		"=>":        false,
		"<=":        false,
		"<=>":       false,
		"a\"b":      false,
		"a'b":       false,
		"a\\":       false,
		"#a":        false,
		"a#b":       false,
		"$HOME":     false,
		"[EMC]X":    false,
		"a\u009b2J": false,
		"a\x9b2J":   false,
		"a=b":       true,
		"==":        true,
		"a]":        true,
		"<a>":       true,
	} {
		err := Check("task", name)
		if (err == nil) != ok {
			t.Errorf("Check(%q) = %v, want ok=%v", name, err, ok)
		}
		if err != nil && !errors.Is(err, errs.Invalid) {
			t.Errorf("Check(%q) = %v, not errs.Invalid", name, err)
		}
	}
	if got := Check("thread", "").Error(); got != "a thread needs a name" {
		t.Errorf("empty: %q", got)
	}
	if got := Check("task", "axis\xff").Error(); got != `task name "axis\xff" is not valid UTF-8` {
		t.Errorf("invalid: %q", got)
	}
	if got := Check("task", strings.Repeat("x", 60)).Error(); !strings.Contains(got, "longer than 47") {
		t.Errorf("long: %q", got)
	}
}

func TestCheckDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = Check("task", "servo-thread") }); n != 0 {
		t.Errorf("Check of a valid name allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Escape("servo-thread") }); n != 0 {
		t.Errorf("Escape of a valid name allocates %v times", n)
	}
}

// Escape leaves a valid name alone and makes anything else printable:
// before, a name read from shared memory went to the terminal with its
// C1 bytes (U+009B, CSI), and there was no escaping helper.
func TestEscape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"pid.0.Pgain": "pid.0.Pgain",
		"µ-Ω":         "µ-Ω",
		"a b":         `a\x20b`,
		"a\x1b[2J":    `a\x1b[2J`,
		"a\u009b2J":   `a\u009b2J`,
		"a\x9b2J":     `a\x9b2J`,
		"a\xc2":       `a\xc2`,
		`a\x41`:       `a\\x41`,
		"a\u202eb":    `a\u202eb`,
		"a\U000e0001": `a\U000e0001`,
		"\x00\x7f\n":  `\x00\x7f\x0a`,
		"":            "",
	} {
		assert.Equal(t, want, Escape(in), "Escape(%q)", in)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("servo")
	f.Add("axis\xff")
	f.Add("a\u009b")
	f.Add("<=>")
	f.Fuzz(func(t *testing.T, name string) {
		esc := Escape(name)
		if !utf8.ValidString(esc) || strings.ContainsFunc(esc, func(r rune) bool {
			return !unicode.IsGraphic(r) || unicode.IsSpace(r)
		}) {
			t.Fatalf("Escape(%q) = %q, not printable", name, esc)
		}
		if Check("x", name) != nil {
			return
		}
		if len(name) == 0 || len(name) > MaxLen || !utf8.ValidString(name) ||
			strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f) }) ||
			strings.ContainsAny(name, "\"'\\#$[") || name == "=" || name == "=>" || name == "<=" || name == "<=>" {
			t.Fatalf("Check accepted %q", name)
		}
		if esc != name {
			t.Fatalf("Escape(%q) = %q: a valid name prints as it is", name, esc)
		}
	})
}
