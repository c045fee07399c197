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
