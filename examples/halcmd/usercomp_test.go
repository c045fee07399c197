package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// loadusr -W, waitusr and unloadusr read the host's components from its
// "show comp" rows.
func TestParseShowComp(t *testing.T) {
	t.Parallel()
	text := "Loaded HAL Components:\nID      Type  Name                                      PID   State\n" +
		"     0  RT    siggen                                     812  ready\n" +
		"     1  User  halpanel                                   901  initializing\n" +
		"garbage line\n"
	assert.Equal(t, []hal.CompInfo{
		{Name: "siggen", PID: 812, Ready: true},
		{Name: "halpanel", PID: 901, User: true},
	}, parseShowComp(text))
}
