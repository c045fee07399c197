package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// LinuxCNC's own regression tests (testdata/linuxcnc-tests, copied
// unchanged from LinuxCNC's tests/) and gortapi's tests of the same form
// for its own components (testdata/gortapi-tests) run exactly as
// LinuxCNC's scripts/runtests runs them: in the test's directory,
// "halrun -f test.hal > result 2> stderr" must exit 0, then result must
// equal expected byte for byte, or "./checkresult result" must exit 0.
// halrun, halsampler and halstreamer are this tree's, built once, first
// on PATH; loadusr runs them and sh, sleep and the rest from PATH.
//
// They run on real threads (posix flavor), as LinuxCNC's do: the results
// do not depend on timing, because halstreamer fills the streamer FIFO
// before start and halsampler reads the sampler FIFO in step, one value
// a cycle each. A directory with a file "skip" is skipped; the file says
// why (testdata/runtests.sh does the same by hand).
var halTestDirs = []string{"linuxcnc-tests", "gortapi-tests"}

func TestLinuxCNCRegressionTests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds halrun, halsampler and halstreamer and runs some 40,000 thread cycles; not in -short")
	}
	rttest.Program(t, ".")
	rttest.Program(t, "../halsampler")
	rttest.Program(t, "../halstreamer")
	env := append(os.Environ(),
		"PATH="+rttest.ProgramDir()+string(os.PathListSeparator)+os.Getenv("PATH"),
		"RTAPI_FLAVOR=posix", "RTAPI_LOCK_MEMORY=off",
		// An instance of its own, and the environment alone names it to
		// halrun and what its loadusr starts.
		"RTAPI_INSTANCE=43")
	for _, top := range halTestDirs {
		var tests []string
		require.NoError(t, filepath.WalkDir(filepath.Join("testdata", top), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Name() == "test.hal" {
				tests = append(tests, filepath.Dir(p))
			}
			return err
		}))
		require.NotEmpty(t, tests, top)
		for _, src := range tests {
			name, _ := filepath.Rel("testdata", src)
			t.Run(name, func(t *testing.T) {
				if why, err := os.ReadFile(filepath.Join(src, "skip")); err == nil {
					t.Skip(strings.TrimSpace(string(why)))
				}
				dir := copyTestDir(t, src)
				runHALTest(t, dir, env)
			})
		}
	}
}

// copyTestDir copies a test's directory to a temporary one, modes kept:
// halrun and checkresult write there.
func copyTestDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "test")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// runHALTest runs "halrun -f test.hal > result 2> stderr" in dir and
// judges it as runtests does.
func runHALTest(t *testing.T, dir string, env []string) {
	t.Helper()
	result, err := os.Create(filepath.Join(dir, "result"))
	require.NoError(t, err)
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	require.NoError(t, err)
	cmd := exec.Command(filepath.Join(rttest.ProgramDir(), "halrun"), "-f", "test.hal")
	cmd.Args[0] = "halrun"
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, result, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runErr := cmd.Run()
	require.NoError(t, errors.Join(result.Close(), stderr.Close()))
	errText, _ := os.ReadFile(filepath.Join(dir, "stderr"))
	require.NoError(t, runErr, "halrun -f test.hal; stderr:\n%s", errText)
	got, err := os.ReadFile(filepath.Join(dir, "result"))
	require.NoError(t, err)
	t.Logf("result: %d lines; stderr: %q", bytes.Count(got, []byte("\n")), errText)
	if want, err := os.ReadFile(filepath.Join(dir, "expected")); err == nil {
		if !bytes.Equal(got, want) {
			gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("result differs from expected at line %d:\n got %q\nwant %q", i+1, gl[i], wl[i])
				}
			}
			t.Fatalf("result has %d lines, expected %d", len(gl), len(wl))
		}
		return
	}
	check := exec.Command("./checkresult", "result")
	check.Dir, check.Env = dir, env
	out, err := check.CombinedOutput()
	require.NoError(t, err, "./checkresult result:\n%s", out)
}
