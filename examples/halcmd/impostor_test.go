package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// impostor listens on path, says "ready" and answers every command "ok"
// with a terminal escape sequence until stdin closes.
func impostor(path string) int {
	ln, err := net.Listen("unix", path)
	if err != nil {
		fmt.Println("listen:", err)
		return 2
	}
	defer ln.Close()
	_ = os.Chmod(path, 0o666)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				rd := bufio.NewReader(c)
				for {
					if _, err := rd.ReadString('\n'); err != nil {
						return
					}
					const out = "\x1b]0;owned\x07impostor\n"
					fmt.Fprintf(c, "ok %d\n%s", len(out), out)
				}
			}()
		}
	}()
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// Issue 37, 1: uid 65534 listens at /dev/shm/gortapi-<instance>-hal.sock,
// where hosts used to put their socket, before root starts halrun with
// its defaults. halrun starts anyway (its socket is in /run/gortapi now)
// and halcmd talks to it, not to the impostor. Before, halrun refused to
// start: "a host already listens".
func TestImpostorAtOldSocketPath(t *testing.T) {
	halrun, _ := binaries(t)
	inst := strconv.Itoa(1000 + rand.IntN(1<<20))
	planted := "/dev/shm/gortapi-" + inst + "-hal.sock"
	imp := rttest.ChildAs(t, rttest.Nobody, "impostor", planted)
	stdin, err := imp.StdinPipe()
	require.NoError(t, err)
	stdout, err := imp.StdoutPipe()
	require.NoError(t, err)
	imp.Stderr = os.Stderr
	require.NoError(t, imp.Start())
	t.Cleanup(func() {
		stdin.Close()
		_ = imp.Wait()
		os.Remove(planted)
	})
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	require.Equal(t, "ready\n", line)

	cmd := exec.Command(halrun, "-rtapi.flavor", "posix", "-rtapi.lock-memory=off", "-rtapi.instance", inst,
		"../halrun/testdata/servo-loop.hal")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	sc := bufio.NewScanner(out)
	loaded := false
	for !loaded && sc.Scan() {
		loaded = strings.Contains(sc.Text(), "loaded on flavor")
	}
	if !loaded {
		t.Fatalf("halrun did not start: %v: %s", cmd.Wait(), stderr.String())
	}
	go func() {
		for sc.Scan() {
		}
	}()

	_, bin := binaries(t)
	saved, err := exec.Command(bin, "-rtapi.instance", inst, "save").CombinedOutput()
	require.NoError(t, err, "%s", saved)
	assert.Contains(t, string(saved), "loadrt pid")
	assert.NotContains(t, string(saved), "impostor")

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, cmd.Wait(), "%s", stderr.String())
}
