//go:build linux

package ipc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// Cross-process tests re-execute this test binary. TestMain runs the role
// rttest.Child named (rttest.ChildRole) instead of the tests, on the segment named by
// IPC_KEY/IPC_INSTANCE.
var children = map[string]func(seg *shm.Segment){}

var testInstance = func() int {
	if v := os.Getenv("IPC_INSTANCE"); v != "" {
		n, _ := strconv.Atoi(v)
		return n
	}
	return 200000 + os.Getpid()
}()

func shmOpts() shm.Options { return shm.Options{Instance: testInstance} }

func TestMain(m *testing.M) {
	if role := rttest.ChildRole(); role == "inversion" {
		os.Exit(inversionChild(os.Args[1:]))
	} else if role != "" {
		key, _ := strconv.ParseUint(os.Getenv("IPC_KEY"), 10, 32)
		seg, err := shm.Attach(shmOpts(), uint32(key))
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		children[role](seg)
		_ = seg.Close()
		os.Exit(0)
	}
	code := m.Run()
	if rttest.CleanShm(shm.DefaultDir, testInstance) != 0 {
		code = 1
	}
	os.Exit(code)
}

// nextKey is the last key newSeg gave out (tests run in parallel).
var nextKey atomic.Uint32

// newSeg creates a fresh segment in /dev/shm, deleted at the end of the test.
func newSeg(tb testing.TB, size int) *shm.Segment {
	tb.Helper()
	seg, err := shm.Create(shmOpts(), nextKey.Add(1), size)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = seg.Delete() })
	return seg
}

// proc is a child process running one role, with a line reader on its
// stdout.
type proc struct {
	cmd *exec.Cmd
	out *bufio.Scanner
}

func startChild(tb testing.TB, role string, seg *shm.Segment, env ...string) *proc {
	tb.Helper()
	rttest.RequireSelfExec(tb)
	cmd := rttest.Child(role)
	cmd.Env = append(cmd.Env, "IPC_INSTANCE="+strconv.Itoa(testInstance),
		"IPC_KEY="+strconv.FormatUint(uint64(seg.Key()), 10))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(tb, err)
	require.NoError(tb, cmd.Start())
	p := &proc{cmd: cmd, out: bufio.NewScanner(out)}
	tb.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

// expect reads the child's next stdout line and checks it.
func (p *proc) expect(tb testing.TB, line string) {
	tb.Helper()
	require.True(tb, p.out.Scan(), "child ended before saying %q", line)
	require.Equal(tb, line, p.out.Text())
}

func (p *proc) kill(tb testing.TB) {
	tb.Helper()
	require.NoError(tb, p.cmd.Process.Kill())
	_ = p.cmd.Wait() // reap it: a zombie still counts as alive
}

func (p *proc) wait(tb testing.TB) {
	tb.Helper()
	require.NoError(tb, p.cmd.Wait())
}

func say(s string) { fmt.Println(s) }
