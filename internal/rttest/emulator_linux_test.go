package rttest

import (
	"strings"
	"testing"
)

// The cpuinfo of CI's 386 guest (qemu 7.2, -accel tcg -cpu max, captured
// from a boot) names an emulated CPU; this Firecracker VM's (KVM) does
// not; a missing file is no emulator.
func TestTCGFromCpuinfo(t *testing.T) {
	if got := tcgIn("testdata/cpuinfo/qemu-tcg-max.txt"); !strings.Contains(got, "QEMU TCG CPU version 2.5+") {
		t.Errorf("qemu TCG guest's cpuinfo: %q, want the TCG CPU named", got)
	}
	if got := tcgIn("testdata/cpuinfo/firecracker-kvm.txt"); got != "" {
		t.Errorf("KVM guest's cpuinfo: %q, want none", got)
	}
	if got := tcgIn("testdata/cpuinfo/absent.txt"); got != "" {
		t.Errorf("no cpuinfo: %q, want none", got)
	}
}

// SkipIfCPUTimeEmulated skips on an emulated CPU and runs the test on
// this machine's own.
func TestSkipIfCPUTimeEmulated(t *testing.T) {
	defer func(e, c func() string) { Emulator, CPUEmulator = e, c }(Emulator, CPUEmulator)
	Emulator = func() string { return "" }
	CPUEmulator = func() string { return "an emulated CPU (a test's stand-in)" }
	var skipped bool
	t.Run("emulated", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		SkipIfCPUTimeEmulated(t, "counts")
	})
	if !skipped {
		t.Error("not skipped on an emulated CPU")
	}
	CPUEmulator = func() string { return "" }
	t.Run("real", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		SkipIfCPUTimeEmulated(t, "counts")
	})
	if skipped {
		t.Error("skipped on a real CPU")
	}
}
