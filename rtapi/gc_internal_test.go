package rtapi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShieldFor(t *testing.T) {
	all := shieldParts{raw: true, procs: true}
	cases := []struct {
		name     string
		toggle   Toggle
		realTime bool
		env      string
		want     shieldParts
	}{
		{"auto on a real-time flavor", Auto, true, "", all},
		{"auto on posix", Auto, false, "", shieldParts{}},
		{"forced on posix", On, false, "", all},
		{"off", Off, true, "", shieldParts{}},
		{"env off", Auto, true, "off", shieldParts{}},
		{"env noraw", Auto, true, "noraw", shieldParts{procs: true}},
		{"env noprocs, noraw", Auto, true, "noprocs, noraw", shieldParts{}},
		{"env ignored when forced on", On, true, "off", all},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, shieldFor(TaskSpec{GCShield: c.toggle}, c.realTime, c.env))
		})
	}
}
