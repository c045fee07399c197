package names

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

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
}

func FuzzCheck(f *testing.F) {
	f.Add("servo")
	f.Add("axis\xff")
	f.Fuzz(func(t *testing.T, name string) {
		if Check("x", name) != nil {
			return
		}
		if len(name) == 0 || len(name) > MaxLen || !utf8.ValidString(name) ||
			strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			t.Fatalf("Check accepted %q", name)
		}
	})
}
