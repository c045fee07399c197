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

func ExampleRT_ShmNew() {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix", Instance: 600000 + os.Getpid()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()

	seg, err := rt.ShmNew(0x5e870, 4096) // creates, or attaches with the same size
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

	// In another process, after rt.ShmAttach(0x5e870) and View:
	var pos [3]float64
	seq := state.Position.Read(&pos)
	fmt.Println(seq, pos)

	// A key collision with another size, and a type the GC could not
	// follow, are refused with errors that say why.
	_, err = rt.ShmNew(0x5e870, 8192)
	var mismatch *shm.SizeMismatchError
	fmt.Println(errors.As(err, &mismatch), mismatch.Existing, mismatch.Requested)
	_, err = shm.View[struct{ Name string }](seg, 0)
	var field *shm.FieldError
	fmt.Println(errors.As(err, &field), field.Field)
	// Output:
	// 1 [10 20.5 -3]
	// true 4096 8192
	// true Name
}
