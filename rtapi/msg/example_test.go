package msg_test

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/rtapi/msg"
)

// A task body logs without allocating; a non-RT goroutine formats the
// messages into zap. rtapi.RT.MsgLogger does the draining for a host.
func Example() {
	sink := msg.NewSink(msg.LevelInfo)
	log, err := sink.Logger("servo", 0)
	if err != nil {
		fmt.Println(err)
		return
	}

	// In the task body (RT-safe):
	log.Warn("following error %.2f mm at cycle %d", msg.Float(0.25), msg.Int(42))
	log.Dbg("not shown: above the INFO threshold")

	// Elsewhere (Sink.Drain does this in a loop until its context ends):
	n := sink.DrainOnce(zap.NewExample())
	fmt.Println(n, "message")
	// Output:
	// {"level":"warn","msg":"following error 0.25 mm at cycle 42","task":"servo"}
	// 1 message
}
