// Package settings resolves an options struct's fields (rtapi.Options)
// from code, flags and environment variables by one table, so a flag and
// its variable parse alike and defaults live in one place.
package settings

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gortapi/gortapi/internal/errs"
)

// Setting is one field of an options struct O: its sources, text and check.
type Setting[O any] struct {
	Field string // the struct field's name
	Flag  string // the flag's name, without "-"; "" when only code sets it
	Env   string // the environment variable; "" when only code sets it
	Usage string // the flag's help
	Value Value[O]
}

// Value is a setting's field of O, seen through its type.
type Value[O any] interface {
	// IsSet reports whether the field holds a value (is not unset).
	IsSet(o *O) bool
	// Parse sets the field from text; Check then validates it and fills
	// in its default when it is unset.
	Parse(o *O, s string) error
	Check(o *O) error
	Format(o *O) string
	// IsBool marks a yes/no flag, which may stand alone.
	IsBool() bool
}

// Table is the settings of O, in the order Resolve checks them; at most
// 32, one bit each in a flagged word.
type Table[O any] []Setting[O]

// Resolve resolves every setting of o: the field when set or flagged (bit
// i), else its non-empty environment variable (getenv), else the default;
// then checks it. An error names the field or variable and its text.
func (t Table[O]) Resolve(o *O, flagged uint32, getenv func(string) string) error {
	for i, s := range t {
		source := "Options." + s.Field
		given := s.Value.IsSet(o) || flagged&(1<<i) != 0
		if !given && s.Env != "" {
			if text := getenv(s.Env); text != "" {
				source = fmt.Sprintf("%s=%q", s.Env, text)
				if err := s.Value.Parse(o, text); err != nil {
					return fmt.Errorf("%s: %w", source, err)
				}
			}
		}
		if err := s.Value.Check(o); err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
	}
	return nil
}

// Register adds to fs a flag for each setting with one whose field want
// accepts, writing o; a given flag sets its bit in *flagged (so a zero
// value counts).
func (t Table[O]) Register(fs *flag.FlagSet, o *O, flagged *uint32, want func(field string) bool) {
	for i, s := range t {
		if s.Flag != "" && want(s.Field) {
			fs.Var(flagValue[O]{t: t, i: i, o: o, flagged: flagged}, s.Flag, s.Usage+" (env "+s.Env+")")
		}
	}
}

// flagValue is the flag.Value of setting i of t, writing o.
type flagValue[O any] struct {
	t       Table[O]
	i       int
	o       *O
	flagged *uint32
}

// String gives the field as text, "" when unset or for a zero flagValue.
func (f flagValue[O]) String() string {
	if f.o == nil || !f.t[f.i].Value.IsSet(f.o) {
		return ""
	}
	return f.t[f.i].Value.Format(f.o)
}

// Set parses and checks s and marks the field as given.
func (f flagValue[O]) Set(s string) error {
	v := f.t[f.i].Value
	o := *f.o
	if err := v.Parse(&o, s); err != nil {
		return err
	}
	if err := v.Check(&o); err != nil {
		return err
	}
	*f.o = o
	*f.flagged |= 1 << f.i
	return nil
}

// IsBoolFlag lets a yes/no flag stand alone (-rtapi.strict).
func (f flagValue[O]) IsBoolFlag() bool { return f.t[f.i].Value.IsBool() }

// Field is the Value of a field of type T in O.
type Field[O, T any] struct {
	At     func(*O) *T
	Unset  func(T) bool
	Decode func(string) (T, error) // nil for a setting only code sets
	Verify func(T) (T, error)      // the value to use; nil: any value as it is
	Text   func(T) string          // nil for a setting only code sets
	Bool   bool                    // a yes/no flag, which may stand alone
}

// IsSet reports whether the field is not unset.
func (f Field[O, T]) IsSet(o *O) bool { return !f.Unset(*f.At(o)) }

// IsBool reports f.Bool.
func (f Field[O, T]) IsBool() bool { return f.Bool }

// Parse decodes s into the field.
func (f Field[O, T]) Parse(o *O, s string) error {
	v, err := f.Decode(s)
	if err != nil {
		return err
	}
	*f.At(o) = v
	return nil
}

// Check verifies the field and stores the value to use.
func (f Field[O, T]) Check(o *O) error {
	if f.Verify == nil {
		return nil
	}
	v, err := f.Verify(*f.At(o))
	if err != nil {
		return err
	}
	*f.At(o) = v
	return nil
}

// Format gives the field as text.
func (f Field[O, T]) Format(o *O) string { return f.Text(*f.At(o)) }

// IsZero reports whether v is its type's zero value.
func IsZero[T comparable](v T) bool {
	var zero T
	return v == zero
}

// IsEmpty reports whether the slice is empty.
func IsEmpty[T any](v []T) bool { return len(v) == 0 }

// Text returns s as it is: the decoder and formatter of a text setting.
func Text(s string) (string, error) { return s, nil }

// Int parses a decimal integer; anything else matches errs.Invalid.
func Int(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer: %w", s, errs.Invalid)
	}
	return n, nil
}

// Duration parses a Go duration (10ms); anything else matches
// errs.Invalid.
func Duration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 10ms: %w", s, errs.Invalid)
	}
	return d, nil
}
