package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

func TestMain(m *testing.M) { os.Exit(rttest.Main(m)) }

// The command line as LinuxCNC's halstreamer reads it, with its
// messages (sampler.ParseUsrArgs, tested there); the rtapi flags through
// rtapi.RegisterShmFlags, so -h is the usage, exit 0, as every tool's.
// Before, halstreamer parsed -rtapi.instance and RTAPI_INSTANCE itself,
// took no RTAPI_SHM_GROUP, and -h was "ERROR: unknown option 'h'".
func TestParseArgs(t *testing.T) {
	t.Parallel()
	got, err := parseArgs([]string{"-rtapi.instance", "4", "-shm-dir=/d", "--group", "g", "-c", "1", "in"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 4, got.RT.Instance)
	assert.Equal(t, "/d", got.ShmDir)
	assert.Equal(t, "g", got.RT.ShmGroup)
	assert.Equal(t, 1, got.Channel)
	assert.Equal(t, "in", got.File)
	for args, msg := range map[string]string{
		"-c 8": "ERROR: invalid channel number '8'\n", "-x": "ERROR: unknown option 'x'\n",
		"-n 3": "ERROR: unknown option 'n'\n", "a b": "ERROR: At most one filename may be specified\n",
	} {
		var stderr bytes.Buffer
		assert.Equal(t, 1, run(context.Background(), strings.Fields(args), nil, &stderr), args)
		assert.Equal(t, msg, stderr.String(), args)
	}
	var stderr bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"-h"}, nil, &stderr))
	assert.Contains(t, stderr.String(), "usage: halstreamer [-c CHAN]")
}

// RTAPI_INSTANCE and RTAPI_SHM_GROUP name the host as they do to every
// rtapi program: the instance finds it, and a group that does not exist
// is refused by name. Before, halstreamer read RTAPI_INSTANCE itself and
// ignored RTAPI_SHM_GROUP, streaming into the host regardless.
func TestEnvironmentNamesHost(t *testing.T) {
	h, th, clock, flags := host(t, "s", 10)
	t.Setenv("RTAPI_INSTANCE", flags[3])
	var stderr bytes.Buffer
	require.Equal(t, 0, run(context.Background(), flags[:2], strings.NewReader("42\n"), &stderr), stderr.String())
	require.NoError(t, clock.RunCycles(th.Task(), 1))
	assert.Equal(t, "42", getp(t, h, "streamer.0.pin.0"))

	t.Setenv("RTAPI_SHM_GROUP", "no-such-group-gortapi")
	stderr.Reset()
	assert.Equal(t, 1, run(context.Background(), flags[:2], strings.NewReader("43\n"), &stderr))
	assert.Contains(t, stderr.String(), "no-such-group-gortapi")
}

// host loads a streamer of cfg on the sim flavor and returns the HAL,
// its thread, its clock and halstreamer's gortapi flags.
func host(t *testing.T, cfg string, depth int) (*hal.HAL, *hal.Thread, *sim.Controller, []string) {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	clock, err := sim.New(rt)
	require.NoError(t, err)
	dir := t.TempDir()
	h, err := hal.New(rt, hal.Options{ShmDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	src := fmt.Sprintf("loadrt threads name1=fast period1=100000\nloadrt streamer cfg=%s depth=%d\naddf streamer.0 fast\nstart\n", cfg, depth)
	cmds, err := halfile.Parse("host.hal", strings.NewReader(src))
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	th, ok := h.Thread("fast")
	require.True(t, ok)
	return h, th, clock, []string{"-shm-dir", dir, "-rtapi.instance", fmt.Sprint(rt.Instance())}
}

func getp(t *testing.T, h *hal.HAL, name string) string {
	t.Helper()
	v, err := h.GetP(name)
	require.NoError(t, err)
	return v
}

// Good lines reach the pins in order; a comment is skipped and not
// reported; a bad line is reported with LinuxCNC's line and field
// numbers (from 0, comments counted) and skipped; the end of the input
// exits 0.
func TestStreamsLines(t *testing.T) {
	h, th, clock, flags := host(t, "fbs", 10)
	in := "1.5 1 -3\n# comment\n2.5 x 4\n2.5 0 4 extra\n3.5 1\n"
	var stderr bytes.Buffer
	code := run(context.Background(), flags, strings.NewReader(in), &stderr)
	assert.Equal(t, 0, code, stderr.String())
	assert.Equal(t, "line 2, field 1: bit value not 0 or 1, skipping the line\n"+
		"line 4, field 2: premature end of line, skipping the line\n", stderr.String())
	require.NoError(t, clock.RunCycles(th.Task(), 1))
	assert.Equal(t, "1.5", getp(t, h, "streamer.0.pin.0"))
	assert.Equal(t, "TRUE", getp(t, h, "streamer.0.pin.1"))
	assert.Equal(t, "-3", getp(t, h, "streamer.0.pin.2"))
	require.NoError(t, clock.RunCycles(th.Task(), 1))
	assert.Equal(t, "2.5", getp(t, h, "streamer.0.pin.0"))
	assert.Equal(t, "FALSE", getp(t, h, "streamer.0.pin.1"))
	assert.Equal(t, "4", getp(t, h, "streamer.0.pin.2"))
	require.NoError(t, clock.RunCycles(th.Task(), 1))
	assert.Equal(t, "TRUE", getp(t, h, "streamer.0.empty"))
	assert.Equal(t, "1", getp(t, h, "streamer.0.underruns"))
}

// A FILE argument is read instead of standard input; one that cannot be
// opened is an error (LinuxCNC's reads an empty input).
func TestStreamsFile(t *testing.T) {
	h, th, clock, flags := host(t, "u", 10)
	file := t.TempDir() + "/in"
	require.NoError(t, os.WriteFile(file, []byte("4294967295\n"), 0o644))
	var stderr bytes.Buffer
	require.Equal(t, 0, run(context.Background(), append(flags, file), strings.NewReader("7\n"), &stderr), stderr.String())
	require.NoError(t, clock.RunCycles(th.Task(), 1))
	assert.Equal(t, "4294967295", getp(t, h, "streamer.0.pin.0"))

	stderr.Reset()
	assert.Equal(t, 1, run(context.Background(), append(flags, file+".absent"), nil, &stderr))
	assert.Contains(t, stderr.String(), "ERROR: cannot open")
}

// With no host, halstreamer says what hal_stream_attach found and exits
// 1; a bad option exits 1 with LinuxCNC's message.
func TestNoHost(t *testing.T) {
	var stderr bytes.Buffer
	assert.Equal(t, 1, run(context.Background(), []string{"-shm-dir", t.TempDir()}, strings.NewReader(""), &stderr))
	assert.True(t, strings.HasPrefix(stderr.String(), "hal_stream_attach: "), stderr.String())
	stderr.Reset()
	assert.Equal(t, 1, run(context.Background(), []string{"-q"}, nil, &stderr))
	assert.Equal(t, "ERROR: unknown option 'q'\n", stderr.String())
}

// On a full FIFO halstreamer waits for room; SIGINT or SIGTERM (its
// context's end) then ends it with status 0, as LinuxCNC's.
func TestWaitsOnFullFIFO(t *testing.T) {
	h, th, clock, flags := host(t, "s", 3)
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- run(ctx, flags, pr, io.Discard) }()
	go func() { _, _ = io.WriteString(pw, "1\n2\n3\n4\n") }()
	// the FIFO holds 2: lines 3 and 4 go in as the streamer takes some
	rttest.WaitFor(t, "all four lines to be streamed", func() bool {
		require.NoError(t, clock.RunCycles(th.Task(), 1))
		return getp(t, h, "streamer.0.pin.0") == "4"
	})
	select {
	case code := <-done:
		t.Fatalf("halstreamer ended (%d) before its input did", code)
	case <-time.After(10 * time.Millisecond):
	}
	cancel()
	pw.Close()
	assert.Equal(t, 0, <-done)
}

// halstreamer as a process fills the FIFO of a streamer in a halrun
// process on the posix flavor; the lines reach the pins (halcmd getp).
func TestStreamsIntoHalrun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds halrun, halcmd and halstreamer")
	}
	dir := t.TempDir()
	file := dir + "/s.hal"
	require.NoError(t, os.WriteFile(file, []byte("loadrt threads name1=fast period1=1000000\n"+
		"loadrt streamer cfg=fu depth=4\naddf streamer.0 fast\nstart\n"), 0o644))
	flags := []string{"-rtapi.instance", "11", "-shm-dir", dir}
	host := exec.Command(rttest.Program(t, "../halrun"), append([]string{"-rtapi.flavor", "posix", "-rtapi.lock-memory=off"}, append(flags, file)...)...)
	stdout, err := host.StdoutPipe()
	require.NoError(t, err)
	host.Stderr = os.Stderr
	host.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, host.Start())
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), "loaded on flavor") {
	}
	go func() {
		for sc.Scan() {
		}
	}()
	// more lines than the FIFO holds: halstreamer waits for the thread
	cmd := exec.Command(rttest.Program(t, "."), flags...)
	cmd.Stdin = strings.NewReader("1.5 1\n2.5 2\n3.5 3\n4.5 4\n5.5 4000000000\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Run(), stderr.String())
	halcmd := rttest.Program(t, "../halcmd")
	rttest.WaitFor(t, "the last line on the pins", func() bool {
		out, err := exec.Command(halcmd, append(flags, "getp", "streamer.0.pin.1")...).Output()
		return err == nil && strings.TrimSpace(string(out)) == "4000000000"
	})
	out, err := exec.Command(halcmd, append(flags, "getp", "streamer.0.pin.0")...).Output()
	require.NoError(t, err)
	assert.Equal(t, "5.5", strings.TrimSpace(string(out)))
}
