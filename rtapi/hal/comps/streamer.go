package comps

import (
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
)

// streamer is LinuxCNC's streamer(9): "loadrt streamer cfg=ffb
// depth=100" makes a FIFO in shared memory that examples/halstreamer
// fills and the function streamer.0 moves onto the pins streamer.0.pin.M
// one line a call (package sampler, LoadStreamer).
func init() { hal.Register("streamer", sampler.LoadStreamer) }
