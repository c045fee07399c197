package sys

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The kernel ABI's numbers for each supported architecture, from
// include/uapi/asm-generic/siginfo.h and signal.h (and glibc's
// sysdeps/unix/sysv/linux/bits/types/siginfo_t.h, which agrees): both
// structures have a fixed size, and the unions inside them start at
// pointer alignment.
var abiLayouts = map[string]struct {
	sigeventTid    uintptr // offsetof(struct sigevent, sigev_notify_thread_id)
	siginfoTimerID uintptr // offsetof(siginfo_t, si_timerid)
	timespec       uintptr // sizeof(struct timespec) of the syscalls gortapi calls
}{
	"amd64":   {sigeventTid: 16, siginfoTimerID: 16, timespec: 16},
	"arm64":   {sigeventTid: 16, siginfoTimerID: 16, timespec: 16},
	"riscv64": {sigeventTid: 16, siginfoTimerID: 16, timespec: 16},
	"arm":     {sigeventTid: 12, siginfoTimerID: 12, timespec: 8},
	"386":     {sigeventTid: 12, siginfoTimerID: 12, timespec: 8},
}

func TestSignalLayoutsMatchKernel(t *testing.T) {
	want, ok := abiLayouts[runtime.GOARCH]
	if !ok {
		t.Skipf("no kernel layout recorded for %s: add it from the uapi headers before supporting it", runtime.GOARCH)
	}
	assert.EqualValues(t, 64, unsafe.Sizeof(sigevent{}), "sizeof(struct sigevent) is SIGEV_MAX_SIZE")
	assert.Equal(t, want.sigeventTid, unsafe.Offsetof(sigevent{}.tid))
	assert.EqualValues(t, ptrSize, unsafe.Offsetof(sigevent{}.signo), "sigev_signo follows the pointer-sized sigval")

	assert.EqualValues(t, 128, unsafe.Sizeof(siginfo{}), "sizeof(siginfo_t) is SI_MAX_SIZE")
	assert.Equal(t, want.siginfoTimerID, unsafe.Offsetof(siginfo{}.timerID))
	assert.Equal(t, want.siginfoTimerID+4, unsafe.Offsetof(siginfo{}.overrun))

	assert.EqualValues(t, 8, unsafe.Sizeof(sigset(0)), "_NSIG/8")
	assert.Equal(t, want.timespec, unsafe.Sizeof(unix.Timespec{}))
}

// Timespec saturates instead of wrapping where tv_sec is 32 bits.
func TestTimespecRange(t *testing.T) {
	ts := Timespec(1_500_000_001)
	assert.EqualValues(t, 1, ts.Sec)
	assert.EqualValues(t, 500_000_001, ts.Nsec)

	const farAhead = 100 * 365 * 24 * 3600 * int64(1e9) // a century: beyond 32-bit seconds
	ts = Timespec(farAhead)
	require.Positive(t, ts.Sec, "a far deadline must stay in the future")
	if unsafe.Sizeof(ts.Sec) == 4 {
		assert.EqualValues(t, maxTimespecSec, ts.Sec)
		assert.EqualValues(t, 999_999_999, ts.Nsec)
	} else {
		assert.Equal(t, farAhead, ts.Nano())
	}
}

// A CPU beyond cpu_set_t (1024 CPUs on every architecture) is refused,
// not silently dropped: on 32-bit, unix.CPUSet has 32-bit words.
func TestSetAffinityBeyondCPUSet(t *testing.T) {
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		done <- SetAffinity(0, []int{0, 1500})
	}()
	require.ErrorIs(t, <-done, unix.EINVAL)
}
