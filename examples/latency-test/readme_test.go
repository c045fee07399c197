package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
)

// TestREADMECommands keeps README.md true: every command in its sh blocks
// is run, here (latency-test's, with a short -D) or by .ci/run (checked
// to contain it verbatim), so none can drift from what the tools accept.
func TestREADMECommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		for _, line := range strings.Split(block[1], "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "$ ") && strings.Contains(block[1], "\n$ ") {
				continue // output shown under a "$ command" line
			}
			line = strings.TrimPrefix(line, "$ ")
			line, _, _ = strings.Cut(line, " #")
			line = strings.TrimSpace(line)
			if line != "" {
				cmds = append(cmds, line)
			}
		}
	}
	if len(cmds) < 10 {
		t.Fatalf("found only %d commands in README.md's sh blocks", len(cmds))
	}
	var bin string // the binary the setcap block builds
	for _, cmd := range cmds {
		args := strings.Fields(cmd)
		sudo := args[0] == "sudo"
		if sudo {
			args = args[1:]
		}
		switch {
		case strings.HasPrefix(strings.Join(args, " "), "go run ./examples/latency-test"):
			t.Run(cmd, func(t *testing.T) {
				if sudo {
					rttest.RequireRT(t)
				}
				t.Chdir(t.TempDir()) // -svg lat.svg lands there
				args := args[3:]
				if i := indexOf(args, ">"); i >= 0 {
					args = args[:i] // the shell's redirection
				}
				var stdout, stderr strings.Builder
				if code := run(context.Background(), append(args, "-D", "0.3"), &stdout, &stderr); code != exitOK {
					t.Fatalf("%s: exit %d: %s", cmd, code, stderr.String())
				}
				// what README runs with sudo is shown for SCHED_FIFO: it must get it
				c, err := parse(args, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				if sudo && (strings.Contains(stderr.String(), "asked for real-time") ||
					c.format != "cyclictest" && !strings.Contains(stdout.String(), "SCHED_FIFO")) {
					t.Fatalf("%s did not run SCHED_FIFO:\n%s\n%s", cmd, stdout.String(), stderr.String())
				}
			})
		case cmd == "go build -o latency-test ./examples/latency-test":
			rttest.RequireGo(t)
			bin = filepath.Join(t.TempDir(), "latency-test")
			if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, out)
			}
		case strings.HasPrefix(cmd, "sudo setcap ") && strings.HasSuffix(cmd, " ./latency-test"):
			if bin == "" {
				t.Fatalf("%s: no binary built before it", cmd)
			}
			setcap, err := exec.LookPath("setcap")
			if err != nil || os.Geteuid() != 0 {
				t.Logf("%s: not run (needs root and setcap)", cmd)
				continue
			}
			capArgs := append(args[1:len(args)-1], bin)
			if out, err := exec.Command(setcap, capArgs...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, out)
			}
		case strings.HasPrefix(cmd, "./latency-test"):
			if bin == "" {
				t.Fatalf("%s: no binary built before it", cmd)
			}
			if out, err := exec.Command(bin, append(args[1:], "-D", "0.3", "-q")...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, out)
			}
		case strings.HasPrefix(cmd, "go get "):
			// installing is what a user does, not a test
		default:
			if !strings.Contains(string(ci), "\n"+cmd) {
				t.Errorf("README command %q is run neither here nor by .ci/run", cmd)
			}
		}
	}

	// the latency-bench duration agrees with docs/BENCHMARKS.md
	bench, err := os.ReadFile("../../docs/BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	minutes := regexp.MustCompile(`about (\d+) minutes`)
	if a, b := minutes.FindSubmatch(readme), minutes.FindSubmatch(bench); a == nil || b == nil || string(a[1]) != string(b[1]) {
		t.Errorf("README and docs/BENCHMARKS.md disagree on how long latency-bench takes: %q vs %q", a, b)
	}
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}
