package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// LinuxCNC's own regression tests (tests/NAME/test.hal with expected or
// checkresult), copied unchanged into testdata/linuxcnc-tests, run as
// LinuxCNC's scripts/runtests runs them: "halrun -f test.hal > result",
// then result must equal expected byte for byte, or "./checkresult
// result" must exit 0. They run on the sim flavor, so each is the same
// on every run and machine: the thread advances one cycle whenever
// halsampler waits for a sample, and never while halstreamer could still
// add to its FIFO; "loadusr -w sleep S" also advances virtual time by S
// seconds once sleep has exited, as the threads would run meanwhile.
//
// halrun has no loadusr yet, so this harness runs it: the programs run
// as processes with the test's directory as their working directory
// (sh runstreamer, halstreamer, sleep), halstreamer being
// examples/halstreamer pointed at the host's segments; halsampler runs in
// this process with halsampler's LinuxCNC format (sampler.AppendLinuxCNC)
// and numbering. setexact_for_test_suite_only is a no-op: sim periods are
// exact. docs/LINUXCNC.md lists the tests and any that differ.

// linuxcncTests are the ported tests, by directory under
// testdata/linuxcnc-tests; differs says why one does not pass (it is
// then skipped, and docs/LINUXCNC.md says so too).
var linuxcncTests = []struct{ name, differs string }{
	{"abs.0", ""},
	{"and-or-not-mux.0", ""},
	{"counter-encoder.0", ""},
	{"edge/both", ""},
	{"edge/both-starting-high", ""},
	{"edge/falling", ""},
	{"edge/falling-starting-high", ""},
	{"edge/rising", ""},
	{"edge/rising-starting-high", ""},
	{"flipflop.0", ""},
	{"hal-show", ""},
	{"halrun-getopt-reset", ""},
	{"limit3/constraints", "needs mux_generic, which gortapi does not ship"},
	{"limit3/limit-accel-and-max", ""},
	{"limit3/limit-max-velocity", ""},
	{"limit3/lock-on-input-and-limits", ""},
	{"limit3/min-max-overshoot", ""},
	{"limit3/runaway", ""},
	{"limit3/sunny-day", ""},
	{"near.0", ""},
	{"source.0", ""},
	{"stepgen.0", ""},
	{"stepgen.1", ""},
	{"stepgen.2", ""},
	{"threads.1", "functions take no time on the sim flavor, so and2.0.tmax is 0; checkresult wants it positive"},
	{"timedelay.0", ""},
}

func TestLinuxCNCRegressionTests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds halstreamer and runs some 40,000 thread cycles; not in -short")
	}
	for _, tc := range linuxcncTests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.differs != "" {
				t.Skip(tc.differs)
			}
			dir := copyTestDir(t, filepath.Join("testdata", "linuxcnc-tests", tc.name))
			result, stderr, err := runLinuxCNCTest(t, dir)
			require.NoError(t, err, "halrun -f test.hal failed; stderr:\n%s", stderr)
			t.Logf("result: %d lines; stderr: %q", bytes.Count(result, []byte("\n")), stderr)
			checkLinuxCNCResult(t, dir, result)
		})
	}
}

// copyTestDir copies a test's directory to a temporary one, modes kept:
// the programs and checkresult write there.
func copyTestDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "test")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// checkLinuxCNCResult judges result as runtests does: equal to expected,
// else checkresult's exit status.
func checkLinuxCNCResult(t *testing.T, dir string, result []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "result"), result, 0o644))
	if want, err := os.ReadFile(filepath.Join(dir, "expected")); err == nil {
		if !bytes.Equal(result, want) {
			gl, wl := strings.Split(string(result), "\n"), strings.Split(string(want), "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("result differs from expected at line %d:\n got %q\nwant %q", i+1, gl[i], wl[i])
				}
			}
			t.Fatalf("result has %d lines, expected %d", len(gl), len(wl))
		}
		return
	}
	cmd := exec.Command("./checkresult", "result")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "./checkresult result:\n%s", out)
}

// linuxcncRun is one test.hal being run.
type linuxcncRun struct {
	t      *testing.T
	dir    string
	shm    shm.Options
	h      *hal.HAL
	clock  *sim.Controller
	out    lockedBuffer // halrun's standard output: the result
	errs   lockedBuffer // its standard error
	env    []string
	bg     []*exec.Cmd // loadusr without -w
	bgDone []chan struct{}
	fifos  []*sampler.Writer // for their fill only
	// shimDir holds halstreamer, first on the programs' PATH.
	shimDir string
}

// runLinuxCNCTest runs dir/test.hal as "halrun -f test.hal" and returns
// its standard output and error; err is what makes halrun exit non-zero.
func runLinuxCNCTest(t *testing.T, dir string) (result []byte, stderr string, err error) {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 40}})
	require.NoError(t, err)
	defer rt.Close()
	clock, err := sim.New(rt)
	require.NoError(t, err)
	shmDir := t.TempDir()
	h, err := hal.New(rt, hal.Options{ShmDir: shmDir})
	require.NoError(t, err)
	r := &linuxcncRun{t: t, dir: dir, shm: shm.Options{Dir: shmDir, Instance: rt.Instance()}, h: h, clock: clock}
	r.env = r.shimEnv()
	defer func() {
		for _, f := range r.fifos {
			f.Close()
		}
		for i, c := range r.bg {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-r.bgDone[i]
		}
	}()
	err = r.file(filepath.Join(dir, "test.hal"), 0)
	err = errors.Join(err, h.Close())
	return r.out.Bytes(), r.errs.String(), err
}

// shimEnv puts a directory first on PATH whose halstreamer is
// examples/halstreamer with the host's segments named.
func (r *linuxcncRun) shimEnv() []string {
	bin := rttest.Program(r.t, "../halstreamer")
	shimDir := r.t.TempDir()
	r.shimDir = shimDir
	script := fmt.Sprintf("#!/bin/sh\nexec %q -shm-dir %q -rtapi.instance %d \"$@\"\n", bin, r.shm.Dir, r.shm.Instance)
	require.NoError(r.t, os.WriteFile(filepath.Join(shimDir, "halstreamer"), []byte(script), 0o755))
	return append(os.Environ(), "PATH="+shimDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// file runs a .hal file's lines in order; source recurses.
func (r *linuxcncRun) file(name string, depth int) error {
	if depth > 10 {
		return fmt.Errorf("%s: source nested too deep", name)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		n, line := i+1, lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + lines[i]
		}
		words := strings.Fields(line)
		if len(words) == 0 || strings.HasPrefix(words[0], "#") {
			continue
		}
		switch words[0] {
		case "setexact_for_test_suite_only":
			continue // sim periods are exact
		case "source":
			if len(words) != 2 {
				return fmt.Errorf("%s:%d: source takes one file", name, n)
			}
			if err := r.file(filepath.Join(filepath.Dir(name), words[1]), depth+1); err != nil {
				return err
			}
			continue
		case "loadusr":
			if err := r.loadusr(words[1:]); err != nil {
				return fmt.Errorf("%s:%d: %w", name, n, err)
			}
			continue
		}
		cmds, err := halfile.Options{}.ParseLineAt(name, n, line)
		if err != nil {
			return err
		}
		for _, c := range cmds {
			if err := r.h.Exec(&r.out, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadusr runs a program as halcmd's loadusr does: -w waits for it to
// exit (a non-zero status is an error); -W and -Wn wait for a component
// that these programs never make, so they are refused.
func (r *linuxcncRun) loadusr(args []string) error {
	wait := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-w":
			wait = true
		case "-i":
		default:
			return fmt.Errorf("loadusr %s: not supported by this harness", args[0])
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("loadusr: no program")
	}
	if args[0] == "halsampler" {
		if !wait {
			return errors.New("loadusr halsampler without -w: not supported by this harness")
		}
		return r.halsampler(args[1:])
	}
	prog := args[0]
	if !strings.Contains(prog, "/") {
		prog = filepath.Join(r.shimDir, prog)
		if _, err := os.Stat(prog); err != nil {
			prog = args[0] // exec.Command looks it up on this process's PATH
		}
	}
	cmd := exec.Command(prog, args[1:]...)
	cmd.Dir, cmd.Env = r.dir, r.env
	cmd.Stdout, cmd.Stderr = &r.out, &r.errs
	// Its own process group, so that the cleanup ends what sh started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if wait {
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("loadusr -w %s: %w", strings.Join(args, " "), err)
		}
		if args[0] == "sleep" && len(args) == 2 {
			sec, err := strconv.ParseFloat(args[1], 64)
			if err != nil || sec < 0 {
				return fmt.Errorf("loadusr -w sleep %q: not a number of seconds this harness takes", args[1])
			}
			return r.clock.Advance(time.Duration(sec * float64(time.Second)))
		}
		return nil
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	r.bg, r.bgDone = append(r.bg, cmd), append(r.bgDone, done)
	return nil
}

// lockedBuffer takes the writes of the programs' output copiers and of
// this goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

func (b *lockedBuffer) String() string { return string(b.Bytes()) }

// halsampler prints -n samples of channel -c as LinuxCNC's halsampler,
// running the fastest thread one cycle whenever the ring is empty.
func (r *linuxcncRun) halsampler(args []string) error {
	channel, count, tag := 0, int64(-1), false
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-t":
			tag = true
		case "-c", "-n":
			if i+1 >= len(args) {
				return fmt.Errorf("halsampler %s: no value", args[i])
			}
			v, err := strconv.ParseInt(args[i+1], 10, 64)
			if err != nil {
				return fmt.Errorf("halsampler %s %s: %w", args[i], args[i+1], err)
			}
			if args[i] == "-c" {
				channel = int(v)
			} else {
				count = v
			}
			i++
		default:
			return fmt.Errorf("halsampler %s: not supported by this harness", args[i])
		}
	}
	if count < 0 {
		return errors.New("halsampler without -n would never end on virtual time")
	}
	rd, err := sampler.Attach(r.shm, channel)
	if err != nil {
		return err
	}
	defer rd.Close()
	var line []byte
	var number uint32
	for n := int64(0); n < count; n++ {
		s, err := rd.TryNext()
		for errors.Is(err, ipc.ErrEmpty) {
			if err := r.cycle(); err != nil {
				return err
			}
			s, err = rd.TryNext()
		}
		if err != nil {
			return err
		}
		line = line[:0]
		if n == 0 {
			number = uint32(s.Cycle - s.Dropped)
			if number != 0 {
				line = append(line, "overrun\n"...)
			}
		}
		if tag {
			line = strconv.AppendUint(line, uint64(number), 10)
			line = append(line, ' ')
		}
		for i, v := range s.Values {
			line = sampler.AppendLinuxCNC(line, rd.Types()[i], v)
		}
		line = append(line, '\n')
		r.out.Write(line)
		number++
	}
	return nil
}

// cycle runs the fastest thread one cycle, once every background program
// has exited or filled a streamer FIFO.
func (r *linuxcncRun) cycle() error {
	threads := r.h.Threads()
	if len(threads) == 0 {
		return errors.New("halsampler waits, but there is no thread")
	}
	fastest := threads[0]
	for _, th := range threads {
		if th.Period() < fastest.Period() {
			fastest = th
		}
	}
	for i := range r.bg {
		for !r.exited(i) && !r.aFIFOFull() {
			time.Sleep(time.Millisecond)
		}
	}
	return r.clock.RunCycles(fastest.Task(), 1)
}

func (r *linuxcncRun) exited(i int) bool {
	select {
	case <-r.bgDone[i]:
		return true
	default:
		return false
	}
}

// aFIFOFull reports whether some streamer channel's FIFO is full.
func (r *linuxcncRun) aFIFOFull() bool {
	if r.fifos == nil {
		for ch := range sampler.MaxStreamChannels {
			w, err := sampler.AttachWriter(r.shm, ch)
			if err != nil {
				break
			}
			r.fifos = append(r.fifos, w)
		}
	}
	for _, w := range r.fifos {
		if n, err := w.Fill(); err == nil && n >= w.Depth()-1 {
			return true
		}
	}
	return false
}
