package group

import (
	"errors"
	"os/user"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gortapi/gortapi/internal/errs"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	for group, want := range map[string]int{"": -1, "0": 0, "5": 5, "2147483647": 2147483647} {
		gid, err := Lookup(group)
		assert.NoError(t, err, "%q", group)
		assert.Equal(t, want, gid, "%q", group)
	}
	if g, err := user.LookupGroupId("0"); err == nil {
		gid, err := Lookup(g.Name)
		assert.NoError(t, err, "%q", g.Name)
		assert.Equal(t, 0, gid, "%q", g.Name)
	}
}

// Misuse is an *Error matching errs.Invalid, with -1, never a gid.
func TestLookupMisuse(t *testing.T) {
	t.Parallel()
	for group, reason := range map[string]string{
		"-5":                    "is negative",
		"-99999999999999999999": "is negative",
		"4294967295":            "is out of range",
		"4294967296":            "is out of range",
		"99999999999999999999":  "is out of range",
		"no-such-group-gortapi": "is unknown",
		"+5":                    "is unknown",
		"a\x00b":                "holds a control character",
		"a\nb":                  "holds a control character",
		"root:x":                "holds a control character or ':'",
	} {
		gid, err := Lookup(group)
		assert.Equal(t, -1, gid, "%q", group)
		assert.ErrorIs(t, err, errs.Invalid, "%q", group)
		var ge *Error
		if assert.True(t, errors.As(err, &ge), "%q: %v", group, err) {
			assert.Equal(t, group, ge.Group)
			assert.True(t, strings.HasPrefix(ge.Reason, reason), "%q: %v", group, err)
		}
	}
}
