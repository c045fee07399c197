package halprompt

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// loadusr -W, waitusr and unloadusr read the host's components from its
// "show comp" rows.
func TestParseShowComp(t *testing.T) {
	t.Parallel()
	comps := []hal.CompInfo{
		{Name: "halpanel", PID: 901, User: true, ID: 12},
		{Name: "siggen", Ready: true, ID: 7}, // RT rows print no PID
	}
	var b strings.Builder
	require.NoError(t, hal.WriteShow(&b, "comp", "", hal.Snapshot{Comps: comps}))
	assert.Equal(t, "Loaded HAL Components:\n"+
		"ID      Type  Name                                                    PID   State\n"+
		"    12  User  halpanel                                                  901 initializing\n"+
		"     7  RT    siggen                                                        ready\n\n", b.String())
	assert.Equal(t, comps, ParseShowComp(b.String()+"garbage line\n"))
}
