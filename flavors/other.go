//go:build !linux

package flavors

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// Registry names of the Linux backends.
const (
	PosixName     = "posix"
	RTPreemptName = "rt-preempt"
)

// Task priorities on the Linux backends.
const (
	PrioLowest  = sys.FIFOPrioMin
	PrioHighest = sys.FIFOPrioMax - 1
)

// MinPeriod is the shortest period the Linux backends accept.
const MinPeriod = 10 * time.Microsecond

// The Linux backends are registered here too, so that asking for one (or
// for "auto") says why it cannot run rather than that it does not exist.
// Only the sim flavor runs on this system.
func init() {
	Register(Descriptor{Name: PosixName, ID: 0, Open: openLinuxOnly(PosixName)})
	Register(Descriptor{Name: RTPreemptName, ID: 1, RealTime: true, Open: openLinuxOnly(RTPreemptName)})
}

func openLinuxOnly(name string) func(Config) (Flavor, string, error) {
	return func(Config) (Flavor, string, error) {
		return nil, "", fmt.Errorf("the %s flavor needs Linux; the sim flavor (RTAPI_FLAVOR=sim) runs here: %w",
			name, ErrNotSupported)
	}
}
