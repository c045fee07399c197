//go:build linux

package shm_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/gortapi/gortapi/rtapi/shm"
)

// Two attachments of one named segment see the same memory, as two
// processes would; a missing key is os.ErrNotExist. rtapi.RT.ShmNew and
// ShmAttach do the same with the RT's instance and trust settings.
func Example() {
	o := shm.Options{Instance: 700000 + os.Getpid()}
	seg, err := shm.New(o, 0x5e871, 64) // creates, or attaches with the same size
	if err != nil {
		fmt.Println(err)
		return
	}
	defer seg.Delete()
	count, err := shm.View[int64](seg, 0) // only pointer-free types
	if err != nil {
		fmt.Println(err)
		return
	}
	*count = 42

	other, err := shm.Attach(o, 0x5e871)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer other.Close()
	seen, _ := shm.View[int64](other, 0)
	fmt.Println(other.Name() == seg.Name(), other.Size(), other.Created(), *seen)

	_, err = shm.Attach(o, 0x5e872)
	fmt.Println(errors.Is(err, shm.ErrNotExist), errors.Is(err, os.ErrNotExist))
	// Output:
	// true 64 false 42
	// true true
}
