package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/kerneldetect"
)

const fixtures = "../../kerneldetect/testdata"

func runRTCheck(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// checkJSONContract asserts the -json fields other tools parse.
func checkJSONContract(t *testing.T, out string, wantProbes bool) map[string]any {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	kind, ok := doc["kind"].(string)
	require.True(t, ok, "kind is a string")
	assert.Contains(t, []string{"unknown", "vanilla", "preempt", "preempt-rt", "xenomai", "rtai"}, kind)
	pre, ok := doc["preempt"].(map[string]any)
	require.True(t, ok, "preempt is an object")
	assert.IsType(t, "", pre["model"])
	assert.IsType(t, false, pre["dynamic"])
	assert.IsType(t, "", pre["mode"])
	for _, k := range []string{"xenomai", "rtai"} {
		v, present := doc[k]
		require.True(t, present, "%s present (object or null)", k)
		if v != nil {
			assert.IsType(t, map[string]any{}, v, k)
		}
	}
	checks, ok := doc["checks"].([]any)
	require.True(t, ok, "checks is an array")
	require.Len(t, checks, len(kerneldetect.CheckIDs))
	for _, c := range checks {
		m := c.(map[string]any)
		for _, f := range []string{"id", "status", "evidence", "remedy"} {
			assert.IsType(t, "", m[f], "check field %s", f)
		}
		assert.Contains(t, []string{"ok", "warn", "fail"}, m["status"])
	}
	assert.IsType(t, false, doc["rt_capable"])
	probes, present := doc["probes"]
	if !wantProbes {
		assert.False(t, present, "no live probes with -root")
		return doc
	}
	require.True(t, present, "probes present on a live run")
	sf := probes.(map[string]any)["sched_fifo"].(map[string]any)
	assert.IsType(t, false, sf["ok"])
	assert.IsType(t, "", sf["detail"])
	assert.NotEmpty(t, sf["detail"])
	return doc
}

func TestFixturesJSON(t *testing.T) {
	for tree, want := range map[string]struct {
		kind string
		code int
	}{
		"debian-6.1-rt":                    {"preempt-rt", exitRTCapable},
		"mainline-6.12-rt":                 {"preempt-rt", exitRTCapable},
		"debian-6.1-voluntary":             {"vanilla", exitNotRT},
		"rpi-6.1-preempt-full":             {"preempt", exitNotRT},
		"vm-firecracker-6.18":              {"vanilla", exitNotRT},
		"unprivileged-user":                {"vanilla", exitNotRT},
		"container-rt-no-budget":           {"vanilla", exitNotRT},
		"xenomai3-ipipe":                   {"xenomai", exitRTCapable},
		"xenomai3-dovetail":                {"xenomai", exitRTCapable},
		"evl":                              {"xenomai", exitRTCapable},
		"rtai":                             {"rtai", exitRTCapable},
		"vm-firecracker-6.18-preempt-full": {"preempt", exitNotRT},
		"debian-6.1-isolcpus-nohz":         {"vanilla", exitNotRT},
	} {
		t.Run(tree, func(t *testing.T) {
			code, out, errOut := runRTCheck(t, "-json", "-root", filepath.Join(fixtures, tree))
			assert.Equal(t, want.code, code, errOut)
			doc := checkJSONContract(t, out, false)
			assert.Equal(t, want.kind, doc["kind"])
			assert.Equal(t, want.code == exitRTCapable, doc["rt_capable"])
			if want.kind == "xenomai" {
				assert.NotNil(t, doc["xenomai"])
			} else {
				assert.Nil(t, doc["xenomai"])
			}
		})
	}
}

func TestHumanTable(t *testing.T) {
	code, out, _ := runRTCheck(t, "-root", filepath.Join(fixtures, "container-rt-no-budget"))
	assert.Equal(t, exitNotRT, code)
	for _, want := range []string{"kind", "vanilla", "preempt", "model none, dynamic yes, mode none", "checks:",
		"rt_group_sched", "FAIL", "remedy: give the cgroup an RT budget", "evidence:", "proc/self/cgroup", "NOT RT-capable"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "probe sched_fifo", "no live probe on a captured tree")

	code, out, _ = runRTCheck(t, "-root", filepath.Join(fixtures, "xenomai3-ipipe"))
	assert.Equal(t, exitRTCapable, code)
	assert.Contains(t, out, "cobalt core, version 3.1.2, pipeline ipipe")
	assert.Regexp(t, `(?m)^verdict +RT-capable$`, out)

	// The evidence that decided the preemption model, and the boot overrides.
	code, out, _ = runRTCheck(t, "-root", filepath.Join(fixtures, "vm-firecracker-6.18-preempt-full"))
	assert.Equal(t, exitNotRT, code)
	assert.Contains(t, out, "model none, dynamic yes, mode full: effective full (from proc/cmdline)")
	assert.Contains(t, out, "threaded irqs yes (from proc/cmdline)")
}

func TestLive(t *testing.T) {
	code, out, errOut := runRTCheck(t, "-json")
	doc := checkJSONContract(t, out, true)
	sf := doc["probes"].(map[string]any)["sched_fifo"].(map[string]any)
	t.Logf("live: kind %v, probe %v, exit %d", doc["kind"], sf, code)
	assert.Contains(t, []int{exitRTCapable, exitNotRT}, code, errOut)
	assert.Equal(t, code == exitRTCapable, doc["rt_capable"])
	// Under -short the unit lane refuses SCHED_FIFO (rttest.Main).
	if os.Geteuid() == 0 && !anyFailed(doc, "rt_group_sched") && !testing.Short() {
		assert.Equal(t, true, sf["ok"], "root outside a zero-budget cgroup can set SCHED_FIFO: %v", sf["detail"])
	}
	_, out, _ = runRTCheck(t)
	assert.Contains(t, out, "probe sched_fifo")
}

func anyFailed(doc map[string]any, id string) bool {
	for _, c := range doc["checks"].([]any) {
		m := c.(map[string]any)
		if m["id"] == id && m["status"] == "fail" {
			return true
		}
	}
	return false
}

func stripLive(doc map[string]any) map[string]any {
	delete(doc, "probes")
	delete(doc, "rt_capable")
	delete(doc, "next_steps") // the live probe's refusal may lead them
	return doc
}

// Capture here, diagnose the capture (as .tar.gz and unpacked), same report.
func TestCaptureRoundTrip(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "cap.tar.gz")
	_, live, errOut := runRTCheck(t, "-json", "-capture", capture)
	assert.Contains(t, errOut, "captured")
	liveDoc := stripLive(checkJSONContract(t, live, true))

	_, replay, _ := runRTCheck(t, "-json", "-root", capture)
	assert.Equal(t, liveDoc, stripLive(checkJSONContract(t, replay, false)))

	// Only files detection read, all under the roots it reads.
	unpacked := filepath.Join(dir, "tree")
	names := untar(t, capture, unpacked)
	require.NotEmpty(t, names)
	for _, n := range names {
		ok := false
		for _, root := range []string{"proc/", "sys/", "dev/", "boot/", "etc/os-release", "usr/lib/os-release", ".rtcheck/"} {
			ok = ok || strings.HasPrefix(n, root)
		}
		assert.True(t, ok, "unexpected entry %s", n)
	}
	assert.Contains(t, names, "proc/self/status")
	assert.Contains(t, names, "proc/sys/kernel/version")
	assert.NotContains(t, names, "proc/self/environ")
	assert.Less(t, len(names), 200)

	_, fromDir, _ := runRTCheck(t, "-json", "-root", unpacked)
	assert.Equal(t, liveDoc, stripLive(checkJSONContract(t, fromDir, false)))

	// A capture of a capture is the same capture.
	capture2 := filepath.Join(dir, "cap2.tar.gz")
	runRTCheck(t, "-json", "-root", capture, "-capture", capture2)
	assert.ElementsMatch(t, names, untar(t, capture2, filepath.Join(dir, "tree2")))
}

func untar(t *testing.T, name, dst string) []string {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	var files []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		p := filepath.Join(dst, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(p, 0o755))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			b, err := io.ReadAll(tr)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b, 0o644))
			files = append(files, h.Name)
		}
	}
	return files
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	notTar := filepath.Join(dir, "plain.txt")
	require.NoError(t, os.WriteFile(notTar, []byte("x"), 0o644))
	badTar := filepath.Join(dir, "bad.tar.gz")
	require.NoError(t, os.WriteFile(badTar, []byte("not gzip"), 0o644))
	for name, args := range map[string][]string{
		"unknown flag":   {"-bogus"},
		"extra argument": {"extra"},
		"missing root":   {"-root", filepath.Join(dir, "nope")},
		"root is a file": {"-root", notTar},
		"corrupt tar.gz": {"-root", badTar},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runRTCheck(t, args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.NotEmpty(t, errOut)
		})
	}
}

// An unwritable -capture is a usage error, but the report is printed
// all the same; -help is help, exit status 0.
func TestCaptureUnwritableStillReports(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runRTCheck(t, "-root", filepath.Join(fixtures, "rtai"), "-capture", filepath.Join(dir, "no", "such", "dir.tar.gz"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, "rtai", "the report is printed")
	assert.Contains(t, errOut, "-capture:")
	for _, help := range []string{"-h", "-help", "--help"} {
		code, out, errOut = runRTCheck(t, help)
		assert.Equal(t, 0, code, help)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "usage: rtcheck")
	}
}

// buildStatic builds rtcheck the way the real-kernel lane does and checks
// the result is static (no program interpreter).
func buildStatic(t *testing.T) string {
	t.Helper()
	rttest.RequireGo(t)
	bin := filepath.Join(t.TempDir(), "rtcheck")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "CGO_ENABLED=0 build must be static")
	}
	return bin
}

func TestStaticBinaryExitStatus(t *testing.T) {
	bin := buildStatic(t)
	cmd := exec.Command(bin, "-root", filepath.Join(fixtures, "debian-6.1-rt"))
	require.NoError(t, cmd.Run(), "RT-capable tree exits 0")
	err := exec.Command(bin, "-root", filepath.Join(fixtures, "vm-firecracker-6.18")).Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitNotRT, ee.ExitCode())
	err = exec.Command(bin, "-nope").Run()
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitUsage, ee.ExitCode())
}

// In a cgroup-v1 cpu group with no RT budget, SCHED_FIFO fails with EPERM
// even as root; rtcheck must say so, live and from the files.
func TestZeroRTBudgetCgroupLive(t *testing.T) {
	rttest.RequireRoot(t, "creates a cgroup and moves a process into it")
	base := "/sys/fs/cgroup/cpu"
	if _, err := os.Stat(filepath.Join(base, "cpu.rt_runtime_us")); err != nil {
		msg := "no cgroup-v1 cpu controller with RT group scheduling at " + base + " (CONFIG_RT_GROUP_SCHED off or cgroup v2 only)"
		if os.Getenv("GORTAPI_REQUIRE_RT") == "1" {
			t.Log("GORTAPI_REQUIRE_RT=1 but this kernel cannot host the test: " + msg)
		}
		t.Skip(msg)
	}
	bin := buildStatic(t)
	cg := filepath.Join(base, "gortapi-rtcheck-test-"+strconv.Itoa(os.Getpid()))
	require.NoError(t, os.Mkdir(cg, 0o755))
	t.Cleanup(func() { os.Remove(cg) })
	b, err := os.ReadFile(filepath.Join(cg, "cpu.rt_runtime_us"))
	require.NoError(t, err)
	require.Equal(t, "0", strings.TrimSpace(string(b)), "a new cpu cgroup starts with no RT budget")

	cmd := exec.Command("/bin/sh", "-c", `echo $$ > "$1/tasks" && exec "$2" -json`, "sh", cg, bin)
	out, err := cmd.Output()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, exitNotRT, ee.ExitCode())
	doc := checkJSONContract(t, string(out), true)
	sf := doc["probes"].(map[string]any)["sched_fifo"].(map[string]any)
	assert.Equal(t, false, sf["ok"])
	assert.Contains(t, sf["detail"], "operation not permitted")
	assert.Contains(t, sf["detail"], "rt_group_sched")
	assert.True(t, anyFailed(doc, "rt_group_sched"), "files must explain the EPERM")
	assert.False(t, anyFailed(doc, "sched_fifo"), "root has CAP_SYS_NICE: the budget is the problem")
}

// A symlink in a -root tree that points out of it (proc/cmdline ->
// a secret file) is not followed: the secret reaches neither the report
// nor the -capture archive, and the archive is readable by its owner
// only. Before, os.DirFS followed the link and copied the target into a
// 0644 archive.
func TestCaptureDoesNotFollowSymlinksOutOfRoot(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "shadow")
	require.NoError(t, os.WriteFile(secret, []byte("root:$6$secret-hash:19000::::::"), 0o600))
	tree := filepath.Join(dir, "tree")
	require.NoError(t, os.CopyFS(tree, os.DirFS(filepath.Join(fixtures, "debian-6.1-rt"))))
	cmdline := filepath.Join(tree, "proc", "cmdline")
	require.NoError(t, os.Remove(cmdline))
	require.NoError(t, os.Symlink(secret, cmdline))
	// A relative link that climbs out is refused as well.
	require.NoError(t, os.Remove(filepath.Join(tree, "proc", "version")))
	require.NoError(t, os.Symlink("../../shadow", filepath.Join(tree, "proc", "version")))
	// A link that stays inside the tree still works.
	osrelease := filepath.Join(tree, "proc", "sys", "kernel", "osrelease")
	want, err := os.ReadFile(osrelease)
	require.NoError(t, err)
	require.NoError(t, os.Rename(osrelease, osrelease+".real"))
	require.NoError(t, os.Symlink("osrelease.real", osrelease))

	capture := filepath.Join(dir, "cap.tar.gz")
	require.NoError(t, os.WriteFile(capture, nil, 0o644)) // an old capture: its mode must not stay
	_, out, errOut := runRTCheck(t, "-json", "-root", tree, "-capture", capture)
	assert.Contains(t, errOut, "captured")
	assert.NotContains(t, out, "secret-hash")
	fi, err := os.Stat(capture)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	unpacked := filepath.Join(dir, "unpacked")
	names := untar(t, capture, unpacked)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(unpacked, filepath.FromSlash(n)))
		require.NoError(t, err)
		assert.NotContains(t, string(b), "secret-hash", "archive entry %s", n)
	}
	assert.NotContains(t, names, "proc/cmdline")
	assert.Contains(t, names, "proc/sys/kernel/osrelease")
	got, err := os.ReadFile(filepath.Join(unpacked, "proc", "sys", "kernel", "osrelease"))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// A FIFO (or a device) where a -root tree has a file is refused, not
// opened for ever: before, rtcheck -root blocked in open(2) on a FIFO at
// proc/version, waiting for a writer that never came.
func TestRootWithFIFODoesNotHang(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	require.NoError(t, os.CopyFS(tree, os.DirFS(filepath.Join(fixtures, "debian-6.1-rt"))))
	for _, f := range []string{"proc/version", "proc/cmdline", "sys/kernel/realtime"} {
		p := filepath.Join(tree, filepath.FromSlash(f))
		_ = os.Remove(p)
		require.NoError(t, unix.Mkfifo(p, 0o600))
	}
	done := make(chan string, 1)
	go func() {
		_, out, errOut := runRTCheck(t, "-json", "-root", tree)
		done <- out + errOut
	}()
	select {
	case out := <-done:
		assert.NotEmpty(t, out)
	case <-time.After(rttest.WaitTimeout):
		t.Fatalf("rtcheck -root still running after %v: blocked on a FIFO", rttest.WaitTimeout)
	}
}

// rtcheck names the next step on every machine kind in the fixtures, in
// the table and in -json.
func TestNextStepOnEveryFixture(t *testing.T) {
	dirs, err := os.ReadDir(fixtures)
	require.NoError(t, err)
	kinds := map[string]bool{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		t.Run(d.Name(), func(t *testing.T) {
			_, out, _ := runRTCheck(t, "-root", filepath.Join(fixtures, d.Name()))
			assert.Regexp(t, `(?m)^next step +\S`, out)

			_, out, _ = runRTCheck(t, "-json", "-root", filepath.Join(fixtures, d.Name()))
			var doc struct {
				Kind      string   `json:"kind"`
				NextSteps []string `json:"next_steps"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &doc))
			assert.NotEmpty(t, doc.NextSteps)
			kinds[doc.Kind] = true
		})
	}
	for _, k := range []string{"vanilla", "preempt", "preempt-rt", "xenomai", "rtai"} {
		assert.True(t, kinds[k], "a fixture of kind %s", k)
	}
}

// rtcheck says whether the kernel's trace is usable for the trace hook
// (latency-test -b): a check line, and the same check in -json.
func TestTracefsCheck(t *testing.T) {
	_, out, _ := runRTCheck(t, "-root", filepath.Join(fixtures, "debian-6.1-rt"))
	assert.Regexp(t, `(?m)^  tracefs +OK +proc/self/mounts: tracing at /sys/kernel/tracing; trace_marker writable$`, out)
	_, out, _ = runRTCheck(t, "-root", filepath.Join(fixtures, "container-rt-no-budget"))
	assert.Regexp(t, `(?m)^  tracefs +WARN +`, out)
	assert.Contains(t, out, "mount -t tracefs nodev /sys/kernel/tracing")

	_, out, _ = runRTCheck(t, "-json", "-root", filepath.Join(fixtures, "debian-6.1-rt"))
	var doc struct {
		Checks []struct{ ID, Status, Evidence string } `json:"checks"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	found := false
	for _, c := range doc.Checks {
		if c.ID == "tracefs" {
			found = true
			assert.Equal(t, "ok", c.Status)
			assert.Contains(t, c.Evidence, "/sys/kernel/tracing")
		}
	}
	assert.True(t, found, "no tracefs check in -json:\n%s", out)
}
