package reexec

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestMain plays the "echo" role: it prints its role and arguments.
func TestMain(m *testing.M) {
	if Role() == "echo" {
		os.Stdout.WriteString(Role() + " " + strings.Join(os.Args[1:], " ") + "\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A child runs this binary with the role in its environment and the
// arguments as given.
func TestCommandRunsRole(t *testing.T) {
	if Role() != "" {
		t.Fatalf("the test process itself has role %q", Role())
	}
	out, err := Command("echo", "a", "b c").Output()
	if errors.Is(err, syscall.ENOEXEC) {
		// CI's linux/arm lane runs this binary under qemu-user, which a
		// kernel without binfmt_misc cannot exec again; the native lanes
		// (amd64 with -race, 386) run this test.
		t.Skipf("this test binary cannot be executed again here (%v): an emulated architecture", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "echo a b c" {
		t.Fatalf("child printed %q", got)
	}
}
