//go:build linux

package ipc_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// A record ring in a shared-memory segment: the attachment that created
// the segment lays the ring out, another (in practice another process)
// opens it; the writer side is wait-free and may run in a task body.
func ExampleRecordRingAt() {
	o := shm.Options{Instance: 700000 + os.Getpid()}
	size := ipc.RingSize(1024)
	seg, err := shm.New(o, 0x71, size)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer seg.Delete()
	writer, err := ipc.RecordRingAt(seg, 0, size)
	if err != nil {
		fmt.Println(err)
		return
	}
	other, err := shm.Attach(o, 0x71)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer other.Close()
	reader, err := ipc.RecordRingAt(other, 0, size)
	if err != nil {
		fmt.Println(err)
		return
	}

	_ = writer.Put([]byte("jog x+"))
	_ = writer.Put([]byte("estop"))
	buf := make([]byte, 64)
	for {
		n, err := reader.Get(buf)
		if errors.Is(err, ipc.ErrEmpty) {
			break
		}
		fmt.Println(string(buf[:n]))
	}
	// Output:
	// jog x+
	// estop
}

// A semaphore's zero value is ready, in process memory or in a segment
// (SemaphoreAt). TryTake on zero does not block.
func ExampleSemaphore() {
	var sem ipc.Semaphore
	_ = sem.Give() // RT-safe
	fmt.Println(sem.TryTake(), sem.Count())
	err := sem.TryTake()
	fmt.Println(errors.Is(err, ipc.ErrBusy))
	// Output:
	// <nil> 0
	// true
}
