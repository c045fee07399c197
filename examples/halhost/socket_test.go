package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// Issue 37, 1: a listener at /dev/shm/gortapi-<instance>-hal.sock, where
// hosts used to put their socket and any user may create one, no longer
// takes halhost's: halhost serves halcmd from its own directory. Before,
// it started with "no halcmd socket" and halcmd's "save" got the
// listener's "ok".
func TestHalhostIgnoresListenerAtOldPath(t *testing.T) {
	hostBin, _ := binaries(t)
	inst := instance(t)
	planted := "/dev/shm/gortapi-" + inst + "-hal.sock"
	ln, err := net.Listen("unix", planted)
	require.NoError(t, err)
	defer ln.Close()
	go func() { // an impostor: "ok" to whatever comes
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("ok 9\nimpostor\n"))
			c.Close()
		}
	}()
	host := start(t, hostBin, "-rtapi.instance", inst, "-rtapi.flavor", "posix")
	host.waitFor("halhost ready")
	assert.NotContains(t, host.output(), "no halcmd socket")
	out, err := exec.Command(rttest.Program(t, "../halcmd"), "-rtapi.instance", inst, "save").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "net pos-cmd")
	assert.NotContains(t, string(out), "impostor")
	require.Equal(t, 0, host.interrupt(), host.output())
}

// Issue 37, 3: one group rule. A user whose -rtapi.shm-group is a
// supplementary group (usermod -aG) may run net and save through root's
// socket, as it may read the pins; a user outside the group may not.
// Before, SO_PEERCRED's primary group alone counted: "may not command
// this host".
func TestSupplementaryMemberCommandsHost(t *testing.T) {
	rttest.RequireRoot(t, "runs halcmd as another user")
	hostBin, _ := binaries(t)
	inst := instance(t)
	host := start(t, hostBin, "-rtapi.instance", inst, "-rtapi.flavor", "posix", "-rtapi.shm-group", "65534")
	host.waitFor("halhost ready")
	halcmdBin := rttest.Program(t, "../halcmd")
	as := func(groups string, args ...string) (string, error) {
		cmd := exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=1", groups,
			halcmdBin, "-rtapi.instance", inst, "-group", "65534"}, args...)...)
		cmd.Dir = rttest.ProgramDir()
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := as("--groups=65534", "newsig", "from-member", "float")
	require.NoError(t, err, "%s", out)
	out, err = as("--groups=65534", "save")
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "newsig from-member float")
	out, err = as("--clear-groups", "save")
	require.Error(t, err, "%s", out)
	assert.Contains(t, out, "permission denied")
	require.Equal(t, 0, host.interrupt(), host.output())
}

// A socket directory others may write is refused loudly: halhost exits 1
// naming it instead of serving from where anyone could plant a socket.
// Before, halhost served its socket from /dev/shm, writable by all.
func TestHalhostRefusesWorldWritableSocketDir(t *testing.T) {
	rttest.RequireRoot(t, "runs halhost as another user")
	hostBin, _ := binaries(t)
	xdg, err := os.MkdirTemp("", "gortapi-xdg-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(xdg) })
	require.NoError(t, os.Chmod(xdg, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(xdg, "gortapi"), 0o777))
	require.NoError(t, os.Chmod(filepath.Join(xdg, "gortapi"), 0o777))
	// Not a time limit on halhost: a guard that turns a host that serves
	// on (the defect) into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		hostBin, "-rtapi.instance", instance(t), "-rtapi.flavor", "posix", "-rtapi.lock-memory=off")
	cmd.Dir = rttest.ProgramDir()
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+xdg)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Equal(t, 1, cmd.ProcessState.ExitCode(), "%s", out)
	assert.Contains(t, string(out), "every user may write")
	assert.NotContains(t, string(out), "halhost ready")
}
