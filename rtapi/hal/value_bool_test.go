package hal_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// setp and sets take a bit as LinuxCNC's setps_common_cb does: TRUE,
// FALSE, 1, 0, ON, OFF, YES or NO in any case. LinuxCNC's own
// tests/edge/*/test.hal say "setp edge.0.both True".
func TestParseValueBitWordsAsLinuxCNC(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1", "TRUE", "true", "True", "tRuE", "ON", "on", "On", "YES", "yes", "Yes"} {
		w, err := hal.ParseValue(hal.TypeBit, s)
		assert.NoError(t, err, s)
		assert.Equal(t, uint64(1), w, s)
	}
	for _, s := range []string{"0", "FALSE", "false", "False", "OFF", "off", "NO", "no", "No"} {
		w, err := hal.ParseValue(hal.TypeBit, s)
		assert.NoError(t, err, s)
		assert.Zero(t, w, s)
	}
	for _, s := range []string{"", "2", "01", "T", "y", "TRUE ", " 1", "0x1"} {
		_, err := hal.ParseValue(hal.TypeBit, s)
		assert.ErrorIs(t, err, rtapi.ErrInvalid, "%q", s)
	}
}
