package rtapi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShieldRaw(t *testing.T) {
	cases := []struct {
		name     string
		toggle   Toggle
		realTime bool
		env      string
		want     bool
	}{
		{"auto on a real-time flavor", Auto, true, "", true},
		{"auto on posix", Auto, false, "", false},
		{"forced on posix", On, false, "", true},
		{"off", Off, true, "", false},
		{"env off", Auto, true, "off", false},
		{"env ignored when forced on", On, true, "off", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, shieldRaw(TaskSpec{GCShield: c.toggle}, c.realTime, c.env))
		})
	}
}
