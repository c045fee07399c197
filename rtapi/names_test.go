package rtapi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
)

// Task names follow the one rule of internal/names: a name that is not
// printable UTF-8 of at most 47 bytes is refused at creation, so no metrics
// label, table or log line downstream gets it. Before, "axis\xff" was
// accepted and the first promrt scrape panicked.
func TestNewTaskRefusesBadNames(t *testing.T) {
	rt := rttest.Open(t, func() (*rtapi.RT, error) { return rtapi.Open(rtapi.Options{Flavor: "sim"}) })
	for _, name := range []string{"", "axis\xff", "a b", "line\nforged", "\x1b[2J", "0123456789012345678901234567890123456789012345678"} {
		_, err := rt.NewTask(rtapi.TaskSpec{Name: name}, func(*rtapi.TaskContext) error { return nil })
		require.ErrorIs(t, err, rtapi.ErrInvalid, "%q", name)
		var te *rtapi.TaskError
		assert.ErrorAs(t, err, &te)
	}
}
