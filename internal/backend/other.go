//go:build !linux

package backend

import "fmt"

// The Linux backends are registered here too, to say why they cannot run.
func init() {
	Register(Descriptor{Name: PosixName, Open: openLinuxOnly(PosixName)})
	Register(Descriptor{Name: RTPreemptName, Open: openLinuxOnly(RTPreemptName)})
}

func openLinuxOnly(name string) func(Config) (Flavor, string, error) {
	return func(Config) (Flavor, string, error) {
		return nil, "", fmt.Errorf("the %s flavor needs Linux; the sim flavor (RTAPI_FLAVOR=sim) runs here: %w",
			name, ErrNotSupported)
	}
}
