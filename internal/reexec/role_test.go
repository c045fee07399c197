package reexec_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/gortapi/gortapi/internal/reexec"
	"github.com/gortapi/gortapi/internal/rttest"
)

// A child runs this binary with the role in its environment and the
// arguments as given.
func TestCommandRunsRole(t *testing.T) {
	if reexec.Role() != "" {
		t.Fatalf("the test process itself has role %q", reexec.Role())
	}
	rttest.SkipIfEmulated(t, rttest.ForkUnderEmulator)
	out, err := reexec.Command("echo", "a", "b c").Output()
	if errors.Is(err, syscall.ENOEXEC) {
		// a kernel without binfmt_misc cannot exec an emulated
		// architecture's binary again; the native lanes (amd64 with
		// -race, 386) run this test.
		t.Skipf("this test binary cannot be executed again here (%v): an emulated architecture", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "echo a b c" {
		t.Fatalf("child printed %q", got)
	}
}
