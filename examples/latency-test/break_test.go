package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/rttest"
)

// -b and --tracemark map onto rtapi's trace hook; --tracemark and
// -trace-dir alone are refused, naming -b.
func TestBreaktraceParse(t *testing.T) {
	c, err := parse([]string{"-b", "150", "--tracemark", "-trace-dir", "/x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if l := c.lat; l.TraceMark != 150*time.Microsecond || !l.TraceStop || l.TraceDir != "/x" || !c.ct.only {
		t.Fatalf("-b 150 --tracemark: %+v", c.lat)
	}
	c, err = parse([]string{"--breaktrace=7"}, io.Discard)
	if err != nil || c.lat.TraceMark != 7*time.Microsecond || c.lat.TraceDir != "" {
		t.Fatalf("--breaktrace=7: %+v, %v", c, err)
	}
	for _, args := range [][]string{{"--tracemark"}, {"-trace-dir", "/x"}} {
		_, err := parse(args, io.Discard)
		var u usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "-b US") {
			t.Errorf("%q: %v, want a usage error naming -b US", args, err)
		}
	}
}

// Without tracefs there, -b fails at start with a message naming it.
func TestBreaktraceWithoutTracefs(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-flavor", "posix", "-D", "1", "-q", "-b", "100",
		"-trace-dir", filepath.Join(t.TempDir(), "none")}, &stdout, &stderr)
	if code == exitOK || !strings.Contains(stderr.String(), "trace hook") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

// -trace-dir must be a tracefs: root does not write the trace_marker and
// tracing_on of a plain directory another user made (issue #37 item 4).
func TestBreaktraceRefusesPlainDir(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"trace_marker", "tracing_on"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("victim"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-flavor", "posix", "-D", "0.2", "-q", "-b", "1", "-trace-dir", dir}, &stdout, &stderr)
	if code == exitOK || !strings.Contains(stderr.String(), "not a tracefs") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	for _, f := range []string{"trace_marker", "tracing_on"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != "victim" {
			t.Errorf("%s written: %q", f, b)
		}
	}
}

// A real run: the first wake-up past -b 1 µs writes the marker into a
// private trace instance, stops its tracing, ends the run long before -D,
// and the output ends with cyclictest's break lines.
func TestBreaktraceEndsTheRun(t *testing.T) {
	dir := rttest.TraceInstance(t)
	rttest.RequireRT(t)
	var stdout, stderr bytes.Buffer
	// -D 0 runs until the break: the run can only end by it (or the
	// test's own timeout).
	code := run(context.Background(), []string{"-flavor", "posix", "-vanilla-fifo", "-p", "80", "-D", "0", "-q",
		"-b", "1", "--tracemark", "-trace-dir", dir}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	m := regexp.MustCompile(`(?m)^# Thread Ids: \d{5,}\n# Break thread: (\d+)\n# Break value: (\d+)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("want cyclictest's break lines at the end:\n%s", out)
	}
	trace, err := os.ReadFile(filepath.Join(dir, "trace"))
	if err != nil || !strings.Contains(string(trace), "gortapi: task ") {
		t.Fatalf("no marker in the instance's trace (%v):\n%s", err, trace)
	}
	on, err := os.ReadFile(filepath.Join(dir, "tracing_on"))
	if err != nil || strings.TrimSpace(string(on)) != "0" {
		t.Fatalf("tracing_on = %q, %v; want 0", on, err)
	}
}
