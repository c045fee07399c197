package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// These tests run halrun, halweb, halcmd and halsampler as real
// processes and drive the page in headless Chromium (Debian's chromium
// package; .ci/run installs it).

const browserInstance = "13"

// ShotsEnv names a directory where TestBrowser saves its screenshots
// (docs/halweb-scope.png and docs/halweb-tree.png come from it).
const ShotsEnv = "HALWEB_SCREENSHOTS"

// start runs a program with Pdeathsig (it dies with the test) and kills
// it when the test ends.
func start(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		}
	})
}

// waitLine starts cmd and reads its stdout until a line containing want,
// which it returns; the rest of the output is drained.
func waitLine(t *testing.T, cmd *exec.Cmd, want string) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	start(t, cmd)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.Contains(sc.Text(), want) {
			line := sc.Text()
			go func() {
				for sc.Scan() {
				}
			}()
			return line
		}
	}
	t.Fatalf("%s ended before saying %q", cmd.Path, want)
	return ""
}

// chromium starts headless Chromium with a fresh profile; the test's end
// kills it.
func chromium(t *testing.T) context.Context {
	t.Helper()
	bin := rttest.RequireTool(t, "chromium", "apt-get install chromium")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1500, 950),
	} // chromedp starts it with Pdeathsig, from a goroutine locked to its thread

	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, tcancel := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { tcancel(); cancel(); acancel() }) // acancel kills Chromium and its children and waits
	return ctx
}

// evalUntil evaluates js in the page until it returns true.
func evalUntil(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	rttest.WaitFor(t, what, func() bool {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		require.NoError(t, err)
		return ok
	})
}

// capture is the page's last capture.
type capture struct {
	Seq    int         `json:"seq"`
	Names  []string    `json:"names"`
	Fired  int         `json:"fired"`
	Cycle  []uint64    `json:"cycle"`
	V      [][]float64 `json:"v"`
	Config ScopeConfig `json:"config"`
}

// singleCapture applies a single-mode scope on the edge and waits for
// the page to show a capture newer than after.
func singleCapture(t *testing.T, ctx context.Context, edge string, after int) capture {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("trig-edge"), edge),
		chromedp.Click(chromedp.ID("apply")),
	))
	evalUntil(t, ctx, "a "+edge+" capture", fmt.Sprintf(`window.halweb.lastSeq > %d`, after))
	c, err := chromedp.Run(ctx, chromedp.Evaluate[capture](`window.halweb.capture`))
	require.NoError(t, err)
	return c
}

// TestBrowser drives the page against a real halrun: the tree lists the
// pins (a pin named as HTML shows as text), a setp from the page changes
// the pin as halcmd sees it, the filter and the watch list show it, the scope triggers on siggen's square at the
// level on the rising and the falling edge, and the exported CSV holds
// halsampler's samples of the same cycles.
func TestBrowser(t *testing.T) {
	rttest.SkipShort(t, "browser test")
	ctx := chromium(t)
	dir := t.TempDir()
	halrun, halweb := rttest.Program(t, "../halrun"), rttest.Program(t, ".")
	halcmd, halsampler := rttest.Program(t, "../halcmd"), rttest.Program(t, "../halsampler")
	common := []string{"-rtapi.instance", browserInstance, "-shm-dir", dir}
	waitLine(t, exec.Command(halrun, append([]string{"-rtapi.flavor", "posix", "-rtapi.lock-memory=off"},
		append(common, "testdata/browser.hal")...)...), "loaded on flavor")
	line := waitLine(t, exec.Command(halweb, append(common, "-http", "127.0.0.1:0", "-allow-set", "-sampler", "0")...), "serving")
	url := strings.Fields(strings.TrimPrefix(line, "halweb: serving "))[0]
	token, err := os.ReadFile(filepath.Join(dir, "halweb-"+browserInstance+".token"))
	require.NoError(t, err)

	// the tree
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(url+"?token="+strings.TrimSpace(string(token))),
		chromedp.Click(chromedp.CSS(`button[data-tab="tree"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#pins tr[data-name="siggen.0.square"]`)),
	))
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#pins tbody tr")).map(r => r.cells[0].textContent)`))
	require.NoError(t, err)
	assert.Contains(t, names, "siggen.0.sine")
	assert.Contains(t, names, "<img/src=x/onerror=pwned=1>.out", "the name shown as text")
	injected, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.pwned !== undefined || document.querySelector("img") !== null`))
	require.NoError(t, err)
	assert.False(t, injected, "no markup from a name reached the DOM")
	shot(t, ctx, "halweb-tree.png")

	// setp from the page, seen by halcmd
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.ID("set-form")),
		chromedp.SetValue(chromedp.ID("set-verb"), "setp"),
		chromedp.SetValue(chromedp.ID("set-name"), "siggen.0.amplitude"),
		chromedp.SetValue(chromedp.ID("set-value"), "1.25"),
		chromedp.Click(chromedp.ID("set-button")),
	))
	evalUntil(t, ctx, "the setp's answer", `document.getElementById("set-result").textContent !== ""`)
	out, err := exec.Command(halcmd, append(common, "getp", "siggen.0.amplitude")...).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "1.25\n", string(out))

	// the filter, and the watch list with the new value
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("filter"), "amplitude")))
	evalUntil(t, ctx, "the filter", `document.querySelectorAll("#pins tbody tr").length === 1`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#pins tr[data-name="siggen.0.amplitude"] button`)),
		chromedp.Click(chromedp.CSS(`button[data-tab="watch"]`)),
	))
	evalUntil(t, ctx, "the watched value", `(() => { const r = document.querySelector('#watchlist tr[data-name="siggen.0.amplitude"]'); return r !== null && r.cells[2].textContent === "1.25" })()`)

	// the scope: square on channel 0, through 0.5
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`button[data-tab="scope"]`)),
		chromedp.WaitVisible(chromedp.ID("apply")),
		chromedp.SetValue(chromedp.ID("trig-chan"), "0"),
		chromedp.SetValue(chromedp.ID("trig-level"), "0.5"),
		chromedp.SetValue(chromedp.ID("mode"), "single"),
		chromedp.SetValue(chromedp.ID("samples"), "200"),
		chromedp.SetValue(chromedp.ID("position"), "25"),
	))
	evalUntil(t, ctx, "the channels from -sampler 0", `document.getElementById("chan-0").value === "sq"`)
	rising := singleCapture(t, ctx, "rising", 0)
	require.Equal(t, []string{"sq", "sine"}, rising.Names)
	require.Equal(t, 50, rising.Fired)
	assert.Less(t, rising.V[0][rising.Fired-1], 0.5)
	assert.GreaterOrEqual(t, rising.V[0][rising.Fired], 0.5)
	falling := singleCapture(t, ctx, "falling", rising.Seq)
	assert.Greater(t, falling.V[0][falling.Fired-1], 0.5)
	assert.LessOrEqual(t, falling.V[0][falling.Fired], 0.5)
	shot(t, ctx, "halweb-scope.png")

	// the exported CSV against halsampler's samples of channel 1
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.getElementById("csv").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	records, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 201)
	assert.Equal(t, []string{"cycle", "time_s", "sq", "sine"}, records[0])
	last, err := strconv.ParseUint(records[200][0], 10, 64)
	require.NoError(t, err)
	out, err = exec.Command(halsampler, append(common, "-c", "1", "-t", "-n", strconv.FormatUint(last+1, 10))...).Output()
	require.NoError(t, err)
	byCycle := map[string][]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 {
			byCycle[f[0]] = f[1:]
		}
	}
	for _, r := range records[1:] {
		want, ok := byCycle[r[0]]
		if !assert.True(t, ok, "halsampler has no cycle %s", r[0]) {
			continue
		}
		for k := range 2 {
			v, err := strconv.ParseFloat(r[2+k], 64)
			require.NoError(t, err)
			assert.Equal(t, want[k], strconv.FormatFloat(v, 'f', 6, 64), "cycle %s pin %d", r[0], k)
		}
	}
}

// shot saves a screenshot of the page to $HALWEB_SCREENSHOTS/name.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv(ShotsEnv)
	if dir == "" {
		return
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond))) // let the page paint
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
}
