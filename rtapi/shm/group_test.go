package shm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A bad Options.Group is ErrInvalid, by the rule the control socket's
// Options.Group follows (internal/group). Before, "4294967296" passed
// as a gid that fchown truncates to 0 (root's group).
func TestBadGroupRefused(t *testing.T) {
	t.Parallel()
	for _, g := range []string{"-5", "4294967295", "4294967296", "99999999999999999999", "a\x00b", "no-such-group-gortapi"} {
		_, err := Exists(Options{Dir: t.TempDir(), Group: g}, 1)
		assert.ErrorIs(t, err, ErrInvalid, "group %q", g)
	}
}
