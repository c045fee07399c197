package reexec

import (
	"os"
	"strings"
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
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "echo a b c" {
		t.Fatalf("child printed %q", got)
	}
}
