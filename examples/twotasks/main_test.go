package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The README program really runs: build it and run it for a short while on
// each flavor setting the README shows.
func TestReadmeProgram(t *testing.T) {
	rttest.RequireGo(t)
	bin := filepath.Join(t.TempDir(), "twotasks")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	args := [][]string{{"-d", "300ms"}, {"-d", "300ms", "-rtapi.flavor=posix"}}
	if unix.Geteuid() == 0 {
		args = append(args, []string{"-d", "300ms", "-rtapi.vanilla-fifo"})
	}
	for _, a := range args {
		out, err := exec.Command(bin, a...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "flavor ")
		require.Equal(t, 2, bytes.Count(out, []byte("cycles")), "%s", out)
		if len(a) == 3 && a[2] == "-rtapi.vanilla-fifo" {
			require.Contains(t, string(out), "SCHED_FIFO")
			require.Contains(t, string(out), "posix-timer")
		}
	}
}
