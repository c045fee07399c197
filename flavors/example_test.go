//go:build linux

package flavors_test

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/flavors"
	"github.com/gortapi/gortapi/kerneldetect"
)

// Select chooses a backend from what kerneldetect read and from a live
// SCHED_FIFO probe, and says why in a sentence a user can act on. Here
// the kernel is a tree captured on a PREEMPT_RT machine and the probe is
// refused, as for an unprivileged user: Select falls back to posix and
// says what would do better. (rtapi.Open makes the same choice;
// programs normally read it from rtapi.RT.Flavor.)
func ExampleSelect() {
	report, err := kerneldetect.DetectFS(os.DirFS("../kerneldetect/testdata/debian-6.1-rt"))
	if err != nil {
		fmt.Println(err)
		return
	}
	choice, err := flavors.Select("", flavors.Config{
		Kernel: report,
		Probe:  func(prio int) error { return unix.EPERM },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(choice.Name, choice.RealTime)
	fmt.Println(choice.Why)
	// Output:
	// posix false
	// PREEMPT_RT kernel, but SCHED_FIFO cannot be set (operation not permitted); grant it with `setcap cap_sys_nice,cap_ipc_lock+ep BINARY`, an rtprio limit in /etc/security/limits.d/99-realtime.conf (@realtime - rtprio 99, and the user in group realtime), or run as root; in a container add --cap-add SYS_NICE --ulimit rtprio=99 (and --cpu-rt-runtime when RT group scheduling leaves the cgroup no RT budget): permission denied; running the non-real-time posix flavor; posix flavor: SCHED_OTHER threads and absolute sleeps to each release, no real-time guarantee (set VanillaFIFO, RTAPI_VANILLA_FIFO=1 or -rtapi.vanilla-fifo for SCHED_FIFO + POSIX timers; boot a PREEMPT_RT kernel for real-time)
}
