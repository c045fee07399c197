package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
)

// TestEveryToolExitCodes: across the example programs, -help exits 0 and
// bad usage exits 2, so scripts can tell "you typed it wrong" from "it
// ran and failed" (1).
func TestEveryToolExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every example; skipped with -short")
	}
	rttest.RequireGo(t)
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", dir, "../...").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tools := []string{"halhost", "halmon", "latency-bench", "latency-test", "rtcheck", "servo", "simpid", "twotasks"}
	code := func(tool string, args ...string) int {
		err := exec.Command(filepath.Join(dir, tool), args...).Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			return ee.ExitCode()
		}
		t.Fatalf("%s %v: %v", tool, args, err)
		return -1
	}
	for _, tool := range tools {
		if c := code(tool, "-help"); c != 0 {
			t.Errorf("%s -help: exit %d, want 0", tool, c)
		}
		if c := code(tool, "-no-such-flag"); c != 2 {
			t.Errorf("%s -no-such-flag: exit %d, want 2", tool, c)
		}
	}
	for _, bad := range [][]string{
		{"halmon", "-interval", "0"},
		{"halhost", "-stats-key", "0"},
		{"halhost", "-base", "1ms", "-servo", "100us", "-rtapi.flavor", "sim"},
		{"servo", "-vel", "0"},
		{"servo", "-moves", "x"},
		{"rtcheck", "-root", "/no/such/dir"},
		{"latency-test", "-i", "0"},
		{"twotasks", "-d", "0"},
		{"twotasks", "extra"},
		{"simpid", "-seconds", "-1"},
		{"servo", "extra"},
		{"latency-bench", "-rounds", "0"},
	} {
		if c := code(bad[0], bad[1:]...); c != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", bad, c)
		}
	}
}
