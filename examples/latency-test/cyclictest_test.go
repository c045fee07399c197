package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
)

// Tests of latency-test against cyclictest: its command lines, its output
// (compared with real rt-tests output in examples/internal/latency/testdata) and
// its meaning of -p.

const captures = "../internal/latency/testdata/"

// TestCyclictestSpellings: the usual cyclictest command lines parse and
// mean the same here.
func TestCyclictestSpellings(t *testing.T) {
	dir := t.TempDir()
	c, err := parse([]string{"-m", "-p", "80", "-i", "200", "-h", "400", "-q", "-D", "2"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.lat.Options.LockMemory != 1 || c.lat.Priority != 80 || c.histogram != 400 || !c.quiet || c.duration.Seconds() != 2 {
		t.Fatalf("parsed %+v", c)
	}
	c, err = parse([]string{"--mlockall", "--priority=70", "--interval=500", "--histogram=50", "--histfile=" + filepath.Join(dir, "h"),
		"--duration=1m", "--json=" + filepath.Join(dir, "j"), "--quiet", "--affinity=0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.lat.Priority != 70 || c.histogram != 50 || c.histFile == "" || c.jsonFile == "" || c.duration.Minutes() != 1 ||
		!c.quiet || c.lat.Tasks[0].Period.Microseconds() != 500 || len(c.lat.CPUs) != 1 {
		t.Fatalf("parsed %+v", c)
	}
	for _, help := range []string{"-help", "--help"} {
		var out bytes.Buffer
		if code := run(context.Background(), []string{help}, io.Discard, &out); code != exitOK || !strings.Contains(out.String(), "-histogram") {
			t.Errorf("%s: exit %d, usage:\n%s", help, code, out.String())
		}
	}
}

// TestExplicitPriorityMeansFIFO: cyclictest -p 80 runs SCHED_FIFO on any
// kernel; latency-test -p 80 must not silently run SCHED_OTHER.
func TestExplicitPriorityMeansFIFO(t *testing.T) {
	rttest.RequireRT(t)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-p", "80", "-D", "0.3", "-q"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !regexp.MustCompile(`(?m)^servo +1ms +SCHED_FIFO +80 `).MatchString(stdout.String()) || stderr.Len() != 0 {
		t.Fatalf("-p 80 did not run SCHED_FIFO 80 quietly:\n%s\nstderr: %s", stdout.String(), stderr.String())
	}
	// without -p the default stays what the flavor gives
	c, _ := parse([]string{"-D", "1"}, io.Discard)
	if c.lat.Options.VanillaFIFO != rtapi.Auto {
		t.Fatal("no -p: VanillaFIFO forced")
	}
	c, _ = parse([]string{"-p", "80", "-vanilla-fifo=false"}, io.Discard)
	if c.lat.Options.VanillaFIFO != rtapi.Off {
		t.Fatal("-vanilla-fifo=false is a choice: kept")
	}
}

// TestExplicitPriorityRefused runs the tool as an unprivileged user: -p 80
// cannot have SCHED_FIFO there, and says so on stderr; with cyclictest's
// command line or output it exits 1 as cyclictest does, and -rtapi.strict
// refuses to run.
func TestExplicitPriorityRefused(t *testing.T) {
	rttest.RequireRoot(t, "runs the tool as an unprivileged user")
	bin := buildShared(t)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_RTPRIO, &unix.Rlimit{Cur: 0, Max: lim.Max}); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_RTPRIO, &lim)
	nobody := func(args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "RTAPI_VANILLA_FIFO=", "RTAPI_STRICT=", "RTAPI_FLAVOR=")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	stdout, stderr, err := nobody("-p", "80", "-D", "0.2", "-q")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "-p 80 asked for real-time, but task servo runs SCHED_OTHER") {
		t.Errorf("no warning on stderr:\n%s\nstdout:\n%s", stderr, stdout)
	}
	// cyclictest's command line: cyclictest's exit status 1
	for _, args := range [][]string{{"-format", "cyclictest"}, {"-l", "10"}} {
		stdout, stderr, err := nobody(append([]string{"-p", "80", "-D", "0.2", "-q"}, args...)...)
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitFailure || !strings.Contains(stderr, "SCHED_FIFO cannot be set") || stdout != "" {
			t.Errorf("%q: %v, want exit status 1 and why on stderr:\n%s\nstdout:\n%s", args, err, stderr, stdout)
		}
	}
	_, stderr, err = nobody("-p", "80", "-D", "0.2", "-q", "-rtapi.strict")
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() == 0 || !strings.Contains(stderr, "Strict refuses") {
		t.Fatalf("-rtapi.strict: %v\n%s", err, stderr)
	}
}

// buildShared builds the tool where an unprivileged user can run it.
func buildShared(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "latency-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rttest.RequireGo(t)
	bin := filepath.Join(dir, "latency-test")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// shape reduces a line to its layout: numbers with the blanks that pad
// them become 9, an overflow list its label.
func shape(line string) string {
	if strings.HasPrefix(line, "# Thread ") {
		line, _, _ = strings.Cut(line, ":")
	}
	return regexp.MustCompile(` *\d+`).ReplaceAllString(line, "9")
}

func shapes(out string) []string {
	var s []string
	for _, l := range strings.Split(out, "\n") {
		s = append(s, shape(l))
	}
	return s
}

// TestCyclictestOutputParity runs latency-test with the command lines of
// the captured cyclictest runs and compares the layouts line by line.
func TestCyclictestOutputParity(t *testing.T) {
	rttest.RequireRT(t) // the captures were made with -p 80: the header line needs SCHED_FIFO hardening
	for _, c := range []struct {
		capture string
		args    []string
	}{
		{"cyclictest-2.40-quiet.out", []string{"-m", "-p", "80", "-i", "1000", "-D", "0.3", "-q"}},
		{"cyclictest-2.40-2threads-h400.out", []string{"-m", "-p", "80", "-i", "1000", "-D", "0.3", "-h", "400", "-q", "-t", "2"}},
		{"cyclictest-2.40-2threads.out", []string{"-m", "-p", "80", "-i", "1000", "-t", "2", "-D", "0.3", "-q", "-h", "5"}},
		{"cyclictest-2.40-break.out", []string{"-m", "-p", "80", "-i", "1000", "-D", "1", "-q", "-b", "1"}},
	} {
		t.Run(c.capture, func(t *testing.T) {
			if slices.Contains(c.args, "-b") {
				// -b writes the kernel's trace: a private instance keeps the
				// global one untouched
				c.args = append(c.args, "-trace-dir", rttest.TraceInstance(t))
			}
			want, err := os.ReadFile(captures + c.capture)
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), append(c.args, "-format", "cyclictest"), &stdout, &stderr); code != exitOK {
				t.Fatalf("%v: exit %d: %s", c.args, code, stderr.String())
			}
			if got, want := shapes(stdout.String()), shapes(string(want)); !reflect.DeepEqual(got, want) {
				t.Errorf("%v: layout differs from %s\ngot:\n%s\nwant:\n%s", c.args, c.capture, stdout.String(), strings.Join(want, "\n"))
			}
			// the plotting pipeline: every line that is not a comment is a histogram row or a thread line
			for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				if !strings.HasPrefix(l, "#") && !regexp.MustCompile(`^(\d{6} \d{6}(\t\d{6})*|T:.*)$`).MatchString(l) {
					t.Errorf("%v: line %q breaks grep -v '^#'", c.args, l)
				}
			}
		})
	}
}

// TestCyclictestLiveLines: without -q, the status block has cyclictest's
// policy/loadavg line before the thread lines; SCHED_OTHER is
// "other/other" there, as cyclictest --policy other prints it. The run
// lasts until the first block, whenever the machine's load lets it come
// (a run of -D 1.2 could end before a loaded machine drew the block due
// at 1 s).
func TestCyclictestLiveLines(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &liveWatcher{seen: cancel, until: regexp.MustCompile(`(?m)^T: 0 \(.*\n`)}
	if code := run(ctx, []string{"-flavor", "posix", "-D", "0", "-format", "cyclictest"}, stdout, io.Discard); code != exitOK {
		t.Fatal(code)
	}
	capture, err := os.ReadFile(captures + "cyclictest-2.40-live.out")
	if err != nil {
		t.Fatal(err)
	}
	policy := regexp.MustCompile(`(?m)^policy: (fifo|other/other): loadavg: [\d.]+ [\d.]+ [\d.]+ \d+/\d+ \d+ {10}$`)
	if !policy.Match(capture) {
		t.Fatalf("the pattern does not match cyclictest's own line:\n%s", capture)
	}
	if !policy.MatchString(stdout.String()) || !strings.Contains(stdout.String(), "          \n\nT: 0 (") {
		t.Fatalf("no cyclictest status block:\n%q", stdout.String())
	}
}

// TestCyclictestJSON: -format cyclictest --json writes rt-tests' layout;
// the key structure is that of the captured cyclictest --json.
func TestCyclictestJSON(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	file := filepath.Join(t.TempDir(), "ct.json")
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-flavor", "posix", "-D", "0.3", "-q", "-h", "30", "-format", "cyclictest", "--json=" + file}, io.Discard, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(captures + "cyclictest-2.40-h30.json")
	if err != nil {
		t.Fatal(err)
	}
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var k []string
		for x := range m {
			k = append(k, x)
		}
		return k
	}
	thread := func(m map[string]any) map[string]any { return m["thread"].(map[string]any)["0"].(map[string]any) }
	if !sameSet(keys(g), keys(w)) || !sameSet(keys(thread(g)), keys(thread(w))) ||
		!sameSet(keys(g["sysinfo"].(map[string]any)), keys(w["sysinfo"].(map[string]any))) {
		t.Fatalf("not cyclictest's layout:\n%s", got)
	}
	if len(thread(g)["histogram"].(map[string]any)) == 0 && thread(g)["min"].(float64) < 30 {
		t.Fatalf("-h 30: histogram empty though min < 30 µs:\n%s", got)
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

// TestUnwritableOutputsFailAtStart: a -json, -svg or -histfile that cannot
// be written is a usage error before the run, not a failure after it.
func TestUnwritableOutputsFailAtStart(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "out")
	for _, flag := range []string{"-json", "-svg", "-histfile"} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"-flavor", "posix", "-D", "0.5", "-q", flag, missing}, &stdout, &stderr)
		if code != exitUsage || stdout.Len() != 0 || !strings.Contains(stderr.String(), flag+":") {
			t.Errorf("%s to an unwritable path: exit %d, stdout %q (the run happened), stderr %q", flag, code, stdout.String(), stderr.String())
		}
	}
	// a failed start leaves no empty file behind
	dir := t.TempDir()
	file := filepath.Join(dir, "r.json")
	if code := run(context.Background(), []string{"-flavor", "sim", "-D", "0", "-json", file}, io.Discard, io.Discard); code != exitUsage {
		t.Fatalf("sim without -D: exit %d", code)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("left %s behind: %v", file, err)
	}
}

// latency-test's own spellings win over their -rtapi.* twins whatever
// their value, as its doc says, and the twin that latency-test cannot
// honour is refused: no two flags disagree silently.
func TestTwinFlags(t *testing.T) {
	for _, c := range []struct {
		args         []string
		vanilla, mem rtapi.Toggle
	}{
		{[]string{"-vanilla-fifo=false", "-rtapi.vanilla-fifo"}, rtapi.Off, rtapi.Auto},
		{[]string{"-vanilla-fifo", "-rtapi.vanilla-fifo=false"}, rtapi.On, rtapi.Auto},
		{[]string{"-m=false", "-rtapi.lock-memory=on"}, rtapi.Auto, rtapi.Off},
		{[]string{"-mlockall", "-rtapi.lock-memory=off"}, rtapi.Auto, rtapi.On},
		{[]string{"-rtapi.lock-memory=off"}, rtapi.Auto, rtapi.Off},
	} {
		c2, err := parse(c.args, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if c2.lat.Options.VanillaFIFO != c.vanilla || c2.lat.Options.LockMemory != c.mem {
			t.Errorf("%v: VanillaFIFO %v, LockMemory %v; want %v, %v", c.args,
				c2.lat.Options.VanillaFIFO, c2.lat.Options.LockMemory, c.vanilla, c.mem)
		}
	}
	_, err := parse([]string{"-rtapi.histogram-bound=1ms"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-h") {
		t.Errorf("-rtapi.histogram-bound: %v, want a usage error pointing to -h", err)
	}
}
