package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// These tests run halhost and halmon as real processes, as a user would in
// two terminals: build, start, read their output, interrupt, check the
// exit status and that /dev/shm is clean.

// binaries builds halhost, halmon, halrun and halcmd once, before any
// test starts a host (one that faults after 1 s must not wait for a
// build), and returns the first two; rttest.Program returns the others.
func binaries(t *testing.T) (host, mon string) {
	t.Helper()
	rttest.Program(t, "../halrun")
	rttest.Program(t, "../halcmd")
	return rttest.Program(t, "."), rttest.Program(t, "../halmon")
}

func TestMain(m *testing.M) { os.Exit(rttest.Main(m)) }

// keys picks segment keys no other test or running halhost uses.
func keys(t *testing.T) []string {
	t.Helper()
	s := 0x10000000 + rand.Uint32N(0x0fffffff)&^1
	t.Cleanup(func() {
		for _, k := range []uint32{s, s + 1} {
			_, err := os.Stat(segPath(k))
			assert.True(t, os.IsNotExist(err), "segment %s left in /dev/shm", segPath(k))
			os.Remove(segPath(k))
		}
	})
	return []string{"-stats-key", strconv.FormatUint(uint64(s), 10), "-pins-key", strconv.FormatUint(uint64(s+1), 10)}
}

func segPath(k uint32) string { return fmt.Sprintf("/dev/shm/gortapi-0-%08x", k) }

// proc is a running program whose output is collected line by line.
type proc struct {
	t     *testing.T
	cmd   *exec.Cmd
	mu    sync.Mutex
	out   strings.Builder
	lines chan string
	done  chan struct{}
}

func start(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, cmd: exec.Command(bin, args...), lines: make(chan string, 10000), done: make(chan struct{})}
	r, w := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = w, w
	// Killed with the test binary, which a timeout may end before the
	// cleanups: an orphaned host would keep what it inherited, such as
	// the fd of a flock(1) that serializes test runs.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, p.cmd.Start())
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		close(p.done)
	}()
	go func() { p.cmd.Wait(); w.Close() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor reads lines until one contains s.
func (p *proc) waitFor(s string) string {
	p.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l := <-p.lines:
			if strings.Contains(l, s) {
				return l
			}
		case <-p.done:
			// select picks at random among ready cases: lines printed
			// just before the exit may still be buffered.
			for {
				select {
				case l := <-p.lines:
					if strings.Contains(l, s) {
						return l
					}
					continue
				default:
				}
				break
			}
			p.t.Fatalf("%s exited before printing %q:\n%s", p.cmd.Path, s, p.output())
		case <-timeout:
			p.t.Fatalf("%s did not print %q in 30 s:\n%s", p.cmd.Path, s, p.output())
		}
	}
}

// exit waits for the process to end and returns its exit code.
func (p *proc) exit() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		p.t.Fatalf("%s did not exit in 30 s:\n%s", p.cmd.Path, p.output())
	}
	for p.cmd.ProcessState == nil {
		time.Sleep(time.Millisecond)
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) interrupt() int {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGINT))
	return p.exit()
}

func TestHostAndMonitor(t *testing.T) {
	hostBin, monBin := binaries(t)
	k := keys(t)
	host := start(t, hostBin, append([]string{"-base", "200us", "-servo", "1.05ms"}, k...)...)
	host.waitFor("halhost ready")
	assert.Contains(t, host.output(), "servo period 1.05ms rounded to 1ms")

	// A few refreshes: the values are live.
	mon := start(t, monBin, append([]string{"-count", "3", "-interval", "100ms"}, k...)...)
	require.Equal(t, 0, mon.exit(), mon.output())
	out := mon.output()
	for _, want := range []string{"thread base", "thread servo", "motor.0.update", "motor_encoder.0.update",
		"siggen.0.update", "pid.0.do-pid-calcs", "scope.0.sample", "pins:", "siggen.0.sine", "pid.0.error"} {
		assert.Contains(t, out, want)
	}
	assert.Regexp(t, `pid\.0\.command +float +IN +\S+ +<== pos-cmd`, out)
	// The standard pid (its command derivatives feed FF1 and FF2);
	// charge_pump's square wave is the drive's heartbeat.
	assert.Regexp(t, `pid\.0\.commandDD +float +OUT`, out)
	assert.Regexp(t, `charge-pump\.out +bit +OUT +\S+ +==> heartbeat`, out)
	beats := regexp.MustCompile(`thread servo .* running +beat (\d+)`)
	require.Len(t, beats.FindAllString(out, -1), 3, out)
	first, _ := strconv.Atoi(beats.FindStringSubmatch(out)[1])
	rttest.WaitFor(t, "the servo thread beating, the drive enabled", func() bool {
		now := monOnce(t, monBin, k)
		n, _ := strconv.Atoi(beats.FindStringSubmatch(now)[1])
		return n > first && regexp.MustCompile(`motor\.0\.enabled +bit +OUT +TRUE`).MatchString(now)
	})

	// Live until Ctrl-C.
	mon = start(t, monBin, append([]string{"-interval", "50ms"}, k...)...)
	mon.waitFor("pins:")
	require.Equal(t, 0, mon.interrupt(), mon.output())
	assert.Contains(t, mon.output(), "interrupted; detaching")

	require.Equal(t, 0, host.interrupt(), host.output())
	assert.Contains(t, host.output(), "halhost: stopped, segments removed")
	assert.Regexp(t, `halhost: thread servo wake-up latency: max \S+, p99\.9 \S+, [1-9]\d* wake-ups \(\d+ past 10ms\)`, host.output())
	// Each thread's verdict, named with its period (issue 19, goal 4).
	assert.Regexp(t, `verdict:\n  base \S+: .*\n  servo \S+: `, host.output())
	// keys' cleanup checks /dev/shm.
}

// halmon says "host gone" when the host stops, waits, and shows the next
// host's values. Before, it exited (and could not follow a restart).
func TestMonitorNoticesHostStoppingAndReturning(t *testing.T) {
	hostBin, monBin := binaries(t)
	k := keys(t)
	host := start(t, hostBin, append([]string{"-status", "20ms"}, k...)...)
	host.waitFor("halhost ready")
	host.waitFor("thread servo") // the table at start
	host.waitFor("thread servo") // -status: printed again while running
	mon := start(t, monBin, append([]string{"-interval", "20ms"}, k...)...)
	mon.waitFor("pins:")
	require.Equal(t, 0, host.interrupt(), host.output())
	mon.waitFor(fmt.Sprintf("host gone (pid %d)", host.cmd.Process.Pid))

	again := start(t, hostBin, k...)
	again.waitFor("halhost ready")
	mon.waitFor(fmt.Sprintf("host back (pid %d)", again.cmd.Process.Pid))
	mon.waitFor(fmt.Sprintf("host pid %d", again.cmd.Process.Pid))
	mon.waitFor("charge-pump.out")
	require.Equal(t, 0, mon.interrupt(), mon.output())
	require.Equal(t, 0, again.interrupt(), again.output())
}

func TestPanickingFunctionStopsOnlyItsThread(t *testing.T) {
	hostBin, monBin := binaries(t)
	k := keys(t)
	host := start(t, hostBin, append([]string{"-fault-after", "100ms"}, k...)...)
	host.waitFor("halhost ready")
	// halhost's own line; rtapi's error log (stderr, no Logger given)
	// names the panic too, with its stack.
	line := host.waitFor("halhost: thread servo stopped")
	assert.Contains(t, line, "thread servo stopped: function fault.0.trip panicked: injected fault after 100ms")

	// Poll with one-shot halmon runs: how soon the base thread runs is
	// the machine's business, not a threshold of this test.
	var out string
	base := regexp.MustCompile(`thread base .* running +beat (\d+)`)
	firstBeat := -1
	rttest.WaitFor(t, "the base thread advancing and the drive's watchdog dropping the torque", func() bool {
		out = monOnce(t, monBin, k)
		m := base.FindStringSubmatch(out)
		require.NotNil(t, m, "the base thread keeps running:\n%s", out)
		b, _ := strconv.Atoi(m[1])
		if firstBeat < 0 {
			firstBeat = b
		}
		return b > firstBeat && regexp.MustCompile(`motor\.0\.enabled +bit +OUT +FALSE`).MatchString(out)
	})
	assert.Regexp(t, `thread servo .* failed `, out)

	require.Equal(t, 0, host.interrupt(), host.output())
}

// A fault runs the servo thread's safe states (halhost.hal's safep
// lines): the drive's enable drops and the torque command goes to 0, and
// another process sees it, with halcmd getp/gets and with halmon. Before,
// halhost had no amp-enable pin and a fault left the last torque on the
// signal. The drive's enable is the signal amp-enable (set TRUE by
// halhost.hal, read by the standard pid's enable pin and the drive).
func TestFaultDropsAmpEnableForOtherProcesses(t *testing.T) {
	hostBin, monBin := binaries(t)
	inst := instance(t) // halcmd finds the host by its instance's socket
	k := append(keys(t), "-rtapi.instance", inst)
	host := start(t, hostBin, append([]string{"-fault-after", "1s"}, k...)...)
	host.waitFor("halhost ready")
	halcmdBin := rttest.Program(t, "../halcmd")
	halcmd := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(halcmdBin, append([]string{"-rtapi.instance", inst}, args...)...).CombinedOutput()
		require.NoError(t, err, "halcmd %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	rttest.WaitFor(t, "the drive enabled", func() bool { return halcmd("getp", "motor.0.enabled") == "TRUE" })
	assert.Equal(t, "TRUE", halcmd("getp", "pid.0.enable"))

	line := host.waitFor("halhost: thread servo stopped")
	assert.Contains(t, line, "safe states run: pid.0.enable, pid.0.output")
	assert.Equal(t, "FALSE", halcmd("getp", "pid.0.enable"), "pid is disabled: its output stays 0")
	assert.Equal(t, "FALSE", halcmd("getp", "motor.0.amp-enable"), "the base thread's drive reads the signal")
	assert.Equal(t, "FALSE", halcmd("gets", "amp-enable"))
	assert.Equal(t, "0", halcmd("gets", "torque"))
	out := monOnce(t, monBin, k)
	assert.Regexp(t, `pid\.0\.enable +bit +IN +FALSE +<== amp-enable`, out)
	assert.Regexp(t, `pid\.0\.output +float +OUT +0 +==> torque`, out)
	assert.Regexp(t, `thread servo .* failed `, out)
	require.Equal(t, 0, host.interrupt(), host.output())
}

// monOnce runs halmon for one refresh and returns what it printed.
func monOnce(t *testing.T, monBin string, keys []string) string {
	t.Helper()
	out, err := exec.Command(monBin, append([]string{"-count", "1"}, keys...)...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

func TestSecondHostOnTheSameKeysIsRefused(t *testing.T) {
	hostBin, _ := binaries(t)
	k := keys(t)
	host := start(t, hostBin, k...)
	host.waitFor("halhost ready")
	second := start(t, hostBin, k...)
	assert.Equal(t, 1, second.exit())
	assert.Contains(t, second.output(), fmt.Sprintf("belongs to running process %d", host.cmd.Process.Pid))
	require.Equal(t, 0, host.interrupt(), host.output())
}

func TestBadFlags(t *testing.T) {
	hostBin, monBin := binaries(t)
	for _, tc := range []struct {
		bin  string
		args []string
		want string
		code int // 2: bad usage, 1: it ran and failed
	}{
		{hostBin, []string{"-stats-key", "0"}, "two different non-zero", 2},
		{hostBin, []string{"-stats-key", "5", "-pins-key", "5"}, "two different non-zero", 2},
		{hostBin, []string{"-base", "1ms", "-servo", "100us"}, "shorter than the base period", 2},
		{hostBin, []string{"-hal", "/nonexistent.hal"}, "no such file", 2},
		{hostBin, []string{"-hal", "testdata/bad.hal"}, "testdata/bad.hal:2: ", 1},
		{monBin, []string{"-interval", "0"}, "-interval must be positive", 2},
		{monBin, []string{"-stats-key", "0x1234567", "-pins-key", "0x1234568"}, "no halhost running", 1},
		{monBin, []string{"-pins-key", "0x100000000"}, "a 32-bit key", 2},
		// halmon runs no task: only the segment settings are its flags.
		{monBin, []string{"-rtapi.flavor", "sim"}, "flag provided but not defined: -rtapi.flavor", 2},
		{monBin, []string{"-rtapi.lock-memory", "off"}, "flag provided but not defined: -rtapi.lock-memory", 2},
		{monBin, []string{"-rtapi.instance", "3", "-stats-key", "0x1234567", "-pins-key", "0x1234568"}, "no halhost running", 1},
		{monBin, []string{"-rtapi.instance", "x"}, "-rtapi.instance", 2},
		{monBin, []string{"-rtapi.shm-group", strconv.Itoa(os.Getgid()), "-stats-key", "0x1234567", "-pins-key", "0x1234568"}, "no halhost running", 1},
		{hostBin, []string{"-pins-key", "HALP"}, "a 32-bit key", 2},
	} {
		out, err := exec.Command(tc.bin, tc.args...).CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s %v: %s", tc.bin, tc.args, out)
		assert.Equal(t, tc.code, ee.ExitCode(), "%s %v", tc.bin, tc.args)
		assert.Contains(t, string(out), tc.want)
	}
}

// Keys are shown in hex, as segment names spell them (gortapi-0-48414c50).
// Before, -help showed 1212238928.
func TestHelpShowsKeysInHex(t *testing.T) {
	hostBin, monBin := binaries(t)
	for _, bin := range []string{hostBin, monBin} {
		out, _ := exec.Command(bin, "-help").CombinedOutput()
		assert.Contains(t, string(out), "(default 0x48414c50)", "%s -help:\n%s", bin, out)
		assert.Contains(t, string(out), "(default 0x48414c48)", "%s -help:\n%s", bin, out)
		assert.NotContains(t, string(out), "1212238928", bin)
	}
	out, _ := exec.Command(monBin, "-help").CombinedOutput()
	assert.Contains(t, string(out), "-rtapi.instance")
	assert.Contains(t, string(out), "-rtapi.shm-group")
	assert.NotContains(t, string(out), "-rtapi.flavor", "halmon runs no task")
}

func TestKilledHostIsNoticedAndReplaced(t *testing.T) {
	hostBin, monBin := binaries(t)
	k := keys(t)
	host := start(t, hostBin, k...)
	host.waitFor("halhost ready")
	mon := start(t, monBin, append([]string{"-interval", "20ms"}, k...)...)
	mon.waitFor("pins:")
	require.NoError(t, host.cmd.Process.Kill()) // SIGKILL: no clean-up at all
	host.exit()
	mon.waitFor(fmt.Sprintf("host gone (pid %d)", host.cmd.Process.Pid))

	// The dead host's segments are still there; the next host replaces
	// them and, on Ctrl-C, removes its own; halmon follows it.
	again := start(t, hostBin, k...)
	again.waitFor("halhost ready")
	mon.waitFor(fmt.Sprintf("host back (pid %d)", again.cmd.Process.Pid))
	mon.waitFor("charge-pump.out")
	require.Equal(t, 0, mon.interrupt(), mon.output())
	require.Equal(t, 0, again.interrupt(), again.output())
}

// An empty file left at the pins key (a host that died before sizing it,
// or a stray touch) is replaced like a stale stats segment. Before, halhost
// refused to start on it ("segment not initialised").
func TestHostStartsOverEmptyStalePinsFile(t *testing.T) {
	hostBin, _ := binaries(t)
	k := keys(t)
	pinsKey, err := strconv.ParseUint(k[3], 10, 32)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(segPath(uint32(pinsKey)), nil, 0o600))
	host := start(t, hostBin, k...)
	host.waitFor("halhost ready")
	require.Equal(t, 0, host.interrupt(), host.output())
}

// Another process writes a pin count of 1000 into the running host's pins
// segment: the servo thread keeps running on its own count (the host
// never reads back anything but values), and halmon reports the segment
// corrupt instead of crashing.
func TestCorruptPinCountDoesNotStopTheServoThread(t *testing.T) {
	hostBin, _ := binaries(t)
	k := keys(t)
	pinsKey, err := strconv.ParseUint(k[3], 10, 32)
	require.NoError(t, err)
	host := start(t, hostBin, append([]string{"-status", "20ms"}, k...)...)
	host.waitFor("halhost ready")

	f, err := os.OpenFile(segPath(uint32(pinsKey)), os.O_RDWR, 0)
	require.NoError(t, err)
	var n [8]byte
	n[0], n[1] = 0xe8, 0x03         // 1000, little-endian
	_, err = f.WriteAt(n[:], 64+48) // the segment header, then the data header's NPins
	require.NoError(t, err)
	require.NoError(t, f.Close())
	mark := len(host.output())

	servo := regexp.MustCompile(`thread servo .* running +beat +(\d+)`)
	rttest.WaitFor(t, "the servo thread running in three status tables after the corruption", func() bool {
		return len(servo.FindAllString(host.output()[mark:], -1)) >= 3
	})
	beats := servo.FindAllStringSubmatch(host.output()[mark:], -1)
	first, _ := strconv.Atoi(beats[0][1])
	last, _ := strconv.Atoi(beats[len(beats)-1][1])
	assert.Greater(t, last, first, "the servo thread advances")
	assert.NotContains(t, host.output(), "panicked")
	require.Equal(t, 0, host.interrupt(), host.output())
}

// instance picks an rtapi instance no other test uses, so that a test can
// run the programs on their default keys.
func instance(t *testing.T) string {
	t.Helper()
	n := 1000 + rand.IntN(1<<20)
	t.Cleanup(func() {
		left, _ := filepath.Glob(fmt.Sprintf("/dev/shm/gortapi-%d-*", n))
		assert.Empty(t, left, "segments left in /dev/shm")
		for _, f := range left {
			os.Remove(f)
		}
	})
	return strconv.Itoa(n)
}

// halhost and halrun on their default keys run at once on one instance:
// their segments differ; halrun, started first, serves halcmd's socket and
// halhost says it runs without. A second halrun is refused naming the
// first. Before, both used "HALS" for their statistics and the second to
// start was refused.
func TestHalhostAndHalrunAtOnce(t *testing.T) {
	hostBin, _ := binaries(t)
	runBin := rttest.Program(t, "../halrun")
	inst := instance(t)
	run := start(t, runBin, "-rtapi.instance", inst, "-rtapi.flavor", "posix", "../halrun/testdata/servo-loop.hal")
	run.waitFor("halrun: ")
	host := start(t, hostBin, "-rtapi.instance", inst, "-rtapi.flavor", "posix")
	host.waitFor("halhost: no halcmd socket")
	host.waitFor("halhost ready")

	second := start(t, runBin, "-rtapi.instance", inst, "-rtapi.flavor", "posix", "../halrun/testdata/servo-loop.hal")
	assert.Equal(t, 1, second.exit())
	assert.Contains(t, second.output(), fmt.Sprintf("running process %d", run.cmd.Process.Pid))

	require.Equal(t, 0, host.interrupt(), host.output())
	require.Equal(t, 0, run.interrupt(), run.output())
}

// halhost's pins are the library's: halcmd shows, sets and rewires them.
func TestHalcmdSeesHostPins(t *testing.T) {
	hostBin, _ := binaries(t)
	cmdBin := rttest.Program(t, "../halcmd")
	inst := instance(t)
	host := start(t, hostBin, "-rtapi.instance", inst, "-rtapi.flavor", "posix")
	host.waitFor("halhost ready")
	halcmd := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(cmdBin, append([]string{"-rtapi.instance", inst}, args...)...).CombinedOutput()
		require.NoError(t, err, "halcmd %v: %s", args, out)
		return string(out)
	}
	assert.Regexp(t, `pid\.0\.output\s.*==> torque`, halcmd("show", "pin", "pid.0"))
	halcmd("setp", "pid.0.Pgain", "2.5")
	assert.Equal(t, "2.5\n", halcmd("getp", "pid.0.Pgain"))
	halcmd("unlinkp", "scope.0.in")
	assert.NotContains(t, halcmd("show", "pin", "scope.0.in"), "pos-error")
	assert.Contains(t, halcmd("save"), "net pos-cmd")
	require.Equal(t, 0, host.interrupt(), host.output())
}

// With -rtapi.shm-group, both of halhost's segments are the group's,
// readable and not writable by it (mode 0640): halmon run by a member
// reads them, a user outside the group is refused. Before, the stats
// segment stayed 0600 and the member got "permission denied".
func TestGroupMemberMonitors(t *testing.T) {
	rttest.RequireRoot(t, "runs halmon as another user")
	hostBin, monBin := binaries(t)
	k := keys(t)
	host := start(t, hostBin, append([]string{"-rtapi.shm-group", "65534"}, k...)...)
	host.waitFor("halhost ready")
	for _, key := range []string{k[1], k[3]} {
		n, err := strconv.ParseUint(key, 10, 32)
		require.NoError(t, err)
		var st syscall.Stat_t
		require.NoError(t, syscall.Stat(segPath(uint32(n)), &st))
		assert.Equal(t, uint32(0o640), st.Mode&0o777, "segment %s", segPath(uint32(n)))
		assert.Equal(t, uint32(65534), st.Gid)
	}
	as := func(gid string, args ...string) (string, error) {
		cmd := exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=" + gid, "--clear-groups", monBin,
			"-rtapi.shm-group", "65534", "-count", "1"}, append(k, args...)...)...)
		cmd.Dir = rttest.ProgramDir()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := as("65534")
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `motor\.0\.enabled +bit +OUT +TRUE`, out)
	assert.Contains(t, out, "thread servo")
	out, err = as("65533")
	require.Error(t, err, "%s", out)
	assert.Contains(t, out, "permission denied")
	require.Equal(t, 0, host.interrupt(), host.output())
}

// Issue 38, 2 and 3: one who-may rule. A member of the host's group, by
// its primary group or a supplementary one, views the segments (halmon)
// and commands the host (halcmd setp, over the socket); a user outside
// the group may do neither. The segments are mode 0640: no one but the
// host writes them. Before, halcmd's setp stored into the data segment,
// refused ("read-only") to a member who could read it, and allowed to
// any member who could write it, whatever the host's rules.
func TestOneWhoMayRule(t *testing.T) {
	rttest.RequireRoot(t, "runs halcmd and halmon as another user")
	hostBin, monBin := binaries(t)
	inst := instance(t)
	host := start(t, hostBin, "-rtapi.instance", inst, "-rtapi.flavor", "posix", "-rtapi.shm-group", "65534")
	host.waitFor("halhost ready")
	halcmdBin := rttest.Program(t, "../halcmd")
	as := func(groups []string, bin string, args ...string) (string, error) {
		cmd := exec.Command("setpriv", append(append([]string{"--reuid=65534", "--regid=65533"}, groups...), append([]string{bin}, args...)...)...)
		cmd.Dir = rttest.ProgramDir()
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	supplementary := []string{"--groups=65534"}
	out, err := as(supplementary, halcmdBin, "-rtapi.instance", inst, "setp", "pid.0.Pgain", "2")
	require.NoError(t, err, "%s", out)
	out, err = as(supplementary, halcmdBin, "-rtapi.instance", inst, "getp", "pid.0.Pgain")
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "2\n", out)
	out, err = as(supplementary, monBin, "-rtapi.instance", inst, "-rtapi.shm-group", "65534", "-count", "1")
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "thread servo")

	outsider := []string{"--clear-groups"}
	out, err = as(outsider, halcmdBin, "-rtapi.instance", inst, "getp", "pid.0.Pgain")
	require.Error(t, err, "%s", out)
	assert.Contains(t, out, "permission denied")
	out, err = as(outsider, monBin, "-rtapi.instance", inst, "-rtapi.shm-group", "65534", "-count", "1")
	require.Error(t, err, "%s", out)
	assert.Contains(t, out, "permission denied")
	require.Equal(t, 0, host.interrupt(), host.output())
}

// SIGUSR1 prints each thread's wake-up latency since the previous one
// (the start for the first): a benchmark measures a window of its own
// choosing. Before, SIGUSR1 killed halhost.
func TestSigusr1MarksLatencyWindows(t *testing.T) {
	hostBin, _ := binaries(t)
	k := keys(t)
	host := start(t, hostBin, append([]string{"-base", "200us", "-servo", "1ms"}, k...)...)
	host.waitFor("halhost ready")
	var counts [3]int
	for n := 1; n <= 2; n++ {
		require.NoError(t, host.cmd.Process.Signal(syscall.SIGUSR1))
		for _, th := range []string{"base", "servo"} {
			l := host.waitFor(fmt.Sprintf("halhost: mark %d: thread %s wake-up latency", n, th))
			m := regexp.MustCompile(`max \S+, p99\.9 \S+, (\d+) wake-ups \(\d+ past 10ms\)$`).FindStringSubmatch(l)
			require.NotNil(t, m, l)
			if th == "servo" {
				counts[n], _ = strconv.Atoi(m[1])
			}
		}
	}
	require.Equal(t, 0, host.interrupt(), host.output())
	total := regexp.MustCompile(`halhost: thread servo wake-up latency: max \S+, p99\.9 \S+, (\d+) wake-ups`).FindStringSubmatch(host.output())
	require.NotNil(t, total, host.output())
	all, _ := strconv.Atoi(total[1])
	// The windows do not overlap: together they are at most the run.
	assert.LessOrEqual(t, counts[1]+counts[2], all, host.output())
}
