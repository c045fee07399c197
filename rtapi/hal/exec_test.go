package hal_test

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// exec runs one halcmd line on h, as a control client's line runs.
func exec(t *testing.T, h *hal.HAL, line string) error {
	t.Helper()
	c, ok, err := halfile.ParseLine(line)
	require.NoError(t, err, line)
	require.True(t, ok, line)
	return h.Exec(io.Discard, c)
}

// addf's position counts as halcmd's: 1 first, -1 last, -2 before the
// last; 0 and positions past either end are refused with its words.
func TestAddfPositions(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h := newHAL(t, hal.Options{})
	th, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		_, err := h.Export(n, nop)
		require.NoError(t, err)
	}
	err = exec(t, h, "addf a servo 0")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.ErrorContains(t, err, "bad position: 0")
	assert.Empty(t, th.Functs(), "position 0 is refused, not taken as last")

	err = exec(t, h, "addf a servo 2")
	assert.ErrorContains(t, err, "position '2' is too high")
	err = exec(t, h, "addf a servo -2")
	assert.ErrorContains(t, err, "position '-2' is too low")
	require.NoError(t, exec(t, h, "addf c servo -1")) // [c]
	require.NoError(t, exec(t, h, "addf a servo 1"))  // [a c]
	require.NoError(t, exec(t, h, "addf e servo 3"))  // [a c e]
	require.NoError(t, exec(t, h, "addf d servo -2")) // [a c d e]
	require.NoError(t, exec(t, h, "addf b servo -4")) // [a b c d e]
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, th.Functs())
	assert.ErrorContains(t, exec(t, h, "addf f servo 7"), "position '7' is too high")
	assert.ErrorContains(t, exec(t, h, "addf f servo -7"), "position '-7' is too low")
	require.NoError(t, exec(t, h, "addf f servo 6"))
	require.NoError(t, exec(t, h, "addf g servo -7"))
	assert.Equal(t, []string{"g", "a", "b", "c", "d", "e", "f"}, th.Functs())
	assert.ErrorContains(t, exec(t, h, "addf nope servo 0"), "bad position: 0", "0 is refused before the names")
	assert.ErrorContains(t, exec(t, h, "addf nope servo 9"), "no function of that name")
}
