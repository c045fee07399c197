package rtapi_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// Shared state that a servo task publishes and a GUI process reads: only
// numbers, arrays and the rtapi primitives may live in shared memory.
type axisState struct {
	Lock     ipc.Mutex               // guards Homed
	Homed    [3]bool                 //
	Position ipc.Seqlock[[3]float64] // written every cycle, read anywhere
}

// The host creates the segment with ShmCreate, so a second host of the
// same instance is refused instead of becoming a second writer; a peer
// (a GUI, a monitor) attaches with ShmAttach, which never creates.
func ExampleRT_ShmCreate() {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix", Instance: 600000 + os.Getpid()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()

	// The host: creates the segment, or fails if it exists.
	seg, err := rt.ShmCreate(0x5e870, 4096)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer seg.Delete() // removed once the last user detaches
	state, err := shm.View[axisState](seg, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	// In the servo task body (RT-safe, wait-free):
	state.Position.Write(&[3]float64{10, 20.5, -3})

	// A second host is refused, with the pid of the one that created it.
	_, err = rt.ShmCreate(0x5e870, 4096)
	var exist *shm.ExistError
	fmt.Println(errors.Is(err, rtapi.ErrExist), errors.As(err, &exist) && exist.CreatorPID == os.Getpid(), exist.Running)

	// The peer, in another process (here a second mapping in this one):
	// attaches to the segment at whatever size it has, and reads.
	peerSeg, err := rt.ShmAttach(0x5e870)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer peerSeg.Close()
	peer, err := shm.View[axisState](peerSeg, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	var pos [3]float64
	seq := peer.Position.Read(&pos)
	fmt.Println(seq, pos)

	// A type the GC could not follow is refused with an error that says
	// why.
	_, err = shm.View[struct{ Name string }](peerSeg, 0)
	var field *shm.FieldError
	fmt.Println(errors.As(err, &field), field.Field)
	// Output:
	// true true true
	// 1 [10 20.5 -3]
	// true Name
}
