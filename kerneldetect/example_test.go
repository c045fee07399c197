package kerneldetect_test

import (
	"fmt"
	"os"

	"github.com/gortapi/gortapi/kerneldetect"
)

// Diagnose a tree captured on a Debian PREEMPT_RT machine.
func ExampleDetectFS() {
	r, err := kerneldetect.DetectFS(os.DirFS("testdata/debian-6.1-rt"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Kind, r.Preempt.Model, r.RTCapable())
	c, _ := r.Check(kerneldetect.CheckIsolatedCPUs)
	fmt.Println(c.Status, c.Evidence)
	// Output:
	// preempt-rt rt true
	// ok sys/devices/system/cpu/isolated=2-3
}
