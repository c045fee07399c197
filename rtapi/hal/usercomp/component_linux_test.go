//go:build linux

package usercomp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halctl"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	_ "github.com/gortapi/gortapi/rtapi/sim" // registers the sim flavor
)

// Roles of this test binary as a child process:
//   - "joiner": usercomp.New("kid") from the environment, pin kid.out
//     (float OUT) set to 4.5 and kid.in (float IN), ready; print
//     "ready" and wait for SIGTERM (or SIGKILL);
//   - "exit3": exit with status 3 without joining;
//   - "policy": print its thread's scheduling policy and priority.
func TestMain(m *testing.M) {
	switch rttest.ChildRole() {
	case "policy":
		p, prio, err := sys.Scheduler(0)
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		fmt.Println(p, prio)
		os.Exit(0)
	case "joiner":
		os.Exit(joiner())
	case "exit3":
		os.Exit(3)
	}
	os.Exit(rttest.Main(m))
}

func joiner() int {
	c, err := New("kid", Options{})
	if err == nil {
		err = errors.Join(c.NewPin("out", hal.TypeFloat, hal.Out), c.NewPin("in", hal.TypeFloat, hal.In))
	}
	if err == nil {
		err = errors.Join(c.Ready(), c.Set("out", "4.5"))
	}
	if err != nil {
		fmt.Println("joiner:", err)
		return 2
	}
	fmt.Println("ready")
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return 0
}

// host serves a HAL on the sim flavor with component c (c.out, c.in) on
// a socket in a fresh directory.
func host(t *testing.T) (*hal.HAL, string) {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	c.Float("c.out", hal.Out)
	c.Float("c.in", hal.In)
	require.NoError(t, c.Ready())
	dir, err := os.MkdirTemp("", "gortapi-usercomp-")
	require.NoError(t, err)
	path := filepath.Join(dir, "hal.sock")
	s, err := halctl.Serve(h, path, halctl.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(); h.Close(); rt.Close(); os.RemoveAll(dir) })
	return h, path
}

func comps(h *hal.HAL) func() ([]hal.CompInfo, error) {
	v := h.View()
	return func() ([]hal.CompInfo, error) {
		// A read that meets a removal in progress each time is ErrBusy:
		// read again, as a viewer would, for a while.
		for try := 0; ; try++ {
			s, err := v.Read()
			if !errors.Is(err, errs.Busy) || try == 1000 {
				return s.Comps, err
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// Issue 40, 6: a component made with New has its pins and parameters in
// the host, writes its OUT pins in one request and reads its IN pins;
// Close removes it, its signal stays.
func TestComponentPinsAndClose(t *testing.T) {
	h, path := host(t)
	c, err := New("panel", Options{Socket: path})
	require.NoError(t, err)
	require.NoError(t, c.NewPin("jog", hal.TypeFloat, hal.Out))
	require.NoError(t, c.NewPin("pos", hal.TypeFloat, hal.In))
	require.NoError(t, c.NewParam("scale", hal.TypeS32, hal.RW))
	assert.ErrorIs(t, c.NewPin("bad", hal.TypeFloat, 9), errs.Invalid)
	require.NoError(t, c.Ready())
	assert.ErrorIs(t, c.NewPin("late", hal.TypeBit, hal.In), errs.Invalid, "no pins after Ready")
	require.NoError(t, h.Exec(nil, halfile.Command{Verb: "net", Args: []string{"jog", "panel.jog", "c.in"}}))
	require.NoError(t, c.SetMany("jog", "2.5", "scale", "-4"))
	v, err := h.GetP("c.in")
	require.NoError(t, err)
	assert.Equal(t, "2.5", v)
	require.NoError(t, h.Exec(nil, halfile.Command{Verb: "setp", Args: []string{"panel.pos", "7"}}))
	got, err := c.Get("pos")
	require.NoError(t, err)
	assert.Equal(t, "7", got)
	got, err = c.Get("scale")
	require.NoError(t, err)
	assert.Equal(t, "-4", got)
	assert.ErrorIs(t, c.Set("pos", "1"), errs.Invalid, "an IN pin is its signal's")

	_, err = New("panel", Options{Socket: path})
	assert.ErrorIs(t, err, errs.Invalid, "the name is taken")
	require.NoError(t, c.Close())
	assert.ErrorIs(t, c.Set("jog", "1"), errs.Closed)
	require.Eventually(t, func() bool { _, err := h.GetP("panel.jog"); return err != nil }, time.Minute, time.Millisecond)
	_, err = h.GetP("c.in")
	assert.NoError(t, err, "the host's pins stay")
}

// Issue 40, 6: a user component in a second process killed with SIGKILL
// is removed by the host: its pins are gone, its signals stay, the host
// runs on. The child finds the host from the environment alone (Env).
func TestKilledProcessIsRemoved(t *testing.T) {
	rttest.RequireSelfExec(t)
	h, path := host(t)
	cmd := rttest.Child("joiner", "-test.run=^$")
	cmd.Env = append(cmd.Env, Env(path, 0)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	require.Equal(t, "ready\n", line)
	require.NoError(t, h.Exec(nil, halfile.Command{Verb: "net", Args: []string{"kidout", "kid.out", "c.in"}}))
	v, err := h.GetP("c.in")
	require.NoError(t, err)
	assert.Equal(t, "4.5", v)
	cs, err := comps(h)()
	require.NoError(t, err)
	assert.Contains(t, cs, hal.CompInfo{Name: "kid", PID: cmd.Process.Pid, Ready: true, User: true, ID: 6})

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.Eventually(t, func() bool { _, err := h.GetP("kid.out"); return err != nil }, time.Minute, time.Millisecond,
		"the host removed the dead process's component")
	var out bytes.Buffer
	require.NoError(t, h.Exec(&out, halfile.Command{Verb: "show", Args: []string{"sig", "kidout"}}))
	assert.Contains(t, out.String(), "c.in", "the signal stays with the host's pin")
	assert.NotContains(t, out.String(), "kid.out")
	require.NoError(t, h.Exec(nil, halfile.Command{Verb: "sets", Args: []string{"kidout", "1"}}), "the host runs on")
	v, err = h.GetP("c.in")
	require.NoError(t, err)
	assert.Equal(t, "1", v)
}

// The host refuses a user component of a user it does not trust
// (uid 65534), however it dials.
func TestUntrustedUserRefused(t *testing.T) {
	h, path := host(t)
	require.NoError(t, os.Chmod(filepath.Dir(path), 0o755))
	require.NoError(t, os.Chmod(path, 0o666))
	cmd := rttest.ChildAs(t, rttest.Nobody, "joiner", "-test.run=^$")
	cmd.Env = append(cmd.Env, Env(path, 0)...)
	out, err := cmd.CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "may not command this host")
	cs, err := comps(h)()
	require.NoError(t, err)
	for _, c := range cs {
		assert.NotEqual(t, "kid", c.Name)
	}
}

// loadusr -Wn waits for the named component to be ready; unloadusr ends
// its process and waitusr returns once it is gone; -w judges the exit
// status; -W of a program that exits first is an error.
func TestLoaderVerbs(t *testing.T) {
	rttest.RequireSelfExec(t)
	h, path := host(t)
	ld := &Loader{Comps: comps(h), Env: append(Env(path, 0), rttest.ChildEnv+"=joiner"), DieWithParent: true}
	defer ld.Close(time.Minute)
	ctx := context.Background()
	run := func(words ...string) error {
		_, err := ld.Exec(ctx, halfile.Command{Verb: words[0], Args: words[1:]})
		return err
	}
	require.NoError(t, run("loadusr", "-Wn", "kid", os.Args[0], "-test.run=^$"))
	cs, err := comps(h)()
	require.NoError(t, err)
	assert.Contains(t, cs, hal.CompInfo{Name: "kid", PID: cs[len(cs)-1].PID, Ready: true, User: true, ID: 6})
	assert.ErrorIs(t, run("waitusr", "c"), errs.Invalid, "c is no user component")
	require.NoError(t, run("unloadusr", "kid"))
	require.NoError(t, run("waitusr", "kid"))
	_, err = h.GetP("kid.out")
	assert.Error(t, err, "gone when waitusr returned")
	require.NoError(t, run("waitusr", "nosuch"), "not found: no error, as LinuxCNC")

	assert.NoError(t, run("loadusr", "-w", "true"))
	assert.ErrorContains(t, run("loadusr", "-w", "sh", "-c", "exit 3"), "program 'sh' failed, returned 3")
	assert.NoError(t, run("loadusr", "-w", "-i", "sh", "-c", "exit 3"))
	assert.ErrorContains(t, run("loadusr", "-w", "sh", "-c", "kill -9 $$"), "did not exit normally")
	assert.ErrorContains(t, run("loadusr", "-W", "sh", "-c", "exit 0"), "exited without becoming ready")
	assert.ErrorContains(t, run("loadusr", "-W", "sh", "-c", "exit 3"), "exited with status 3")
	assert.ErrorIs(t, run("loadusr", "no-such-program-gortapi"), errs.Invalid)
	_, err = exec.LookPath("sh")
	require.NoError(t, err)
}

// unload NAME ends a user component's process, as unloadusr (LinuxCNC's
// do_unload_cmd), and is left to the host (false) for a realtime one;
// unload all ends every user component and is passed on to the host
// for its unloadrt all (issue #40).
func TestLoaderUnload(t *testing.T) {
	rttest.RequireSelfExec(t)
	h, path := host(t)
	ld := &Loader{Comps: comps(h), Env: append(Env(path, 0), rttest.ChildEnv+"=joiner"), DieWithParent: true}
	defer ld.Close(time.Minute)
	ctx := context.Background()
	run := func(words ...string) (bool, error) {
		return ld.Exec(ctx, halfile.Command{Verb: words[0], Args: words[1:]})
	}
	for range 2 {
		_, err := run("loadusr", "-Wn", "kid", os.Args[0], "-test.run=^$")
		require.NoError(t, err)
		user, err := run("unload", "kid")
		require.NoError(t, err)
		assert.True(t, user, "a user component is unload's own")
		_, err = run("waitusr", "kid")
		require.NoError(t, err)
		_, err = h.GetP("kid.out")
		assert.Error(t, err, "gone when waitusr returned")
	}
	user, err := run("unload", "c")
	require.NoError(t, err)
	assert.False(t, user, "a realtime component is the host's to unload")
	user, err = run("unload", "nosuch")
	require.NoError(t, err)
	assert.False(t, user, "the host says it is not loaded")

	_, err = run("loadusr", "-Wn", "kid", os.Args[0], "-test.run=^$")
	require.NoError(t, err)
	user, err = run("unload", "all")
	require.NoError(t, err)
	assert.False(t, user, "the host runs unloadrt all")
	_, err = run("waitusr", "kid")
	require.NoError(t, err)
}
