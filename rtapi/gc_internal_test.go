package rtapi

import (
	"testing"

	"github.com/gortapi/gortapi/flavors"

	"github.com/stretchr/testify/require"
)

func TestShieldRaw(t *testing.T) {
	cases := []struct {
		name     string
		toggle   flavors.Toggle
		realTime bool
		instance flavors.Toggle // Options.GCShield
		want     bool
	}{
		{"auto on a real-time flavor", Auto, true, Auto, true},
		{"auto on posix", Auto, false, Auto, false},
		{"forced on posix", On, false, Auto, true},
		{"off", Off, true, Auto, false},
		{"instance off", Auto, true, Off, false},
		{"instance on, on posix", Auto, false, On, true},
		{"the task's own choice wins over the instance's", On, true, Off, true},
		{"the task's own off wins too", Off, false, On, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, shieldRaw(TaskSpec{GCShield: c.toggle}, c.realTime, c.instance))
		})
	}
}
