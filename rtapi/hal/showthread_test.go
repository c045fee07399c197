package hal_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// show thread prints what LinuxCNC's print_thread_info prints, byte for
// byte: its two header lines, "%11ld  %-3s  %20s ( %8ld, %8ld )" with
// the period in ns, "YES", the thread's .time and .tmax, newest thread
// first (hal_create_thread puts a new thread at the head of its list),
// a "                 %2d %s" line for each function, and a blank line.
// Before, the period was a duration ("thread servo    period 1ms ...")
// and no blank line ended the list.
func TestShowThreadAsLinuxCNC(t *testing.T) {
	h := verbsHAL(t)
	must(t, h, "setp servo.tmax 1234")
	want := "Realtime Threads:\n" +
		"     Period  FP     Name               (     Time, Max-Time )\n" +
		"    1000000  YES                 servo (        0,     1234 )\n" +
		"                  1 k.update\n" +
		"     500000  YES                  base (        0,        0 )\n" +
		"\n"
	assert.Equal(t, want, must(t, h, "show thread"))
	assert.Equal(t, "Realtime Threads:\n"+
		"     Period  FP     Name               (     Time, Max-Time )\n"+
		"     500000  YES                  base (        0,        0 )\n\n",
		must(t, h, "show thread ba nomatch"))
	all := must(t, h, "show all")
	require.True(t, strings.HasSuffix(all, "k.update\n\n"+want), "show all ends with show thread, after show funct's blank line:\n%s", all)
}

// show funct prints what LinuxCNC's print_funct_info prints: the owner
// component's id as %05d, the code and argument addresses as %08llx,
// "YES", the number of threads that call it, and the name; by name, as
// hal_export_funct keeps its list; a blank line ends it. Before, it
// printed a Thread/Calls/Time/Tmax table with durations.
func TestShowFunctAsLinuxCNC(t *testing.T) {
	h := verbsHAL(t)
	_, err := h.Export("a.first", nop)
	require.NoError(t, err)
	comp := regexp.MustCompile(`(?m)^ +(\d+)  RT    k  `).FindStringSubmatch(must(t, h, "show comp k"))
	require.Len(t, comp, 2)
	out := must(t, h, "show funct")
	re := regexp.MustCompile(`^Exported Functions:\n` +
		`Owner   CodeAddr      Arg           FP   Users   Name\n` +
		` (\d{5})  [0-9a-f]{8,}  [0-9a-f]{8,}  YES      0   a\.first\n` +
		` (\d{5})  [0-9a-f]{8,}  [0-9a-f]{8,}  YES      1   k\.update\n` +
		`\n$`)
	m := re.FindStringSubmatch(out)
	require.NotNil(t, m, "%q", out)
	assert.Equal(t, strings.Repeat("0", 5-len(comp[1]))+comp[1], m[2], "k.update's owner is k")
	assert.NotEqual(t, m[1], m[2], "a.first's owner is the HAL's own __hal")
}

// script runs one halcmd line on h as halcmd -s would (ExecOptions.Script).
func script(t *testing.T, h *hal.HAL, line string) string {
	t.Helper()
	c, ok, err := halfile.ParseLine(line)
	require.NoError(t, err, line)
	require.True(t, ok, line)
	var out bytes.Buffer
	require.NoError(t, h.ExecWith(&out, c, hal.ExecOptions{Script: true}), line)
	return out.String()
}

// With ExecOptions.Script, show prints LinuxCNC's halcmd -s formats
// (halcmd_commands.cc, scriptmode): no headers; pins and parameters as
// "%s %s %s %s %s" with the owner's name, data_type's 5-wide type and
// querydata_refstr's unpadded value; a signal and its pins on one line;
// a thread as "%ld %s %s %8ld %ld" and each function " %s", each ended
// by a newline as print_thread_info_cb ends each of its callbacks; a
// function as "%s %08llx %08llx %s %3d %s". Before, there was no script
// mode: ExecOptions did not exist.
func TestShowScriptModeAsLinuxCNC(t *testing.T) {
	h := verbsHAL(t)
	must(t, h, "setp servo.tmax 1234")
	must(t, h, "alias pin k.s count")
	assert.Equal(t, "k float IN 0 k.in <== fwd\n"+
		"k float IN 0 k.in2 <== fwd\n"+
		"k bit   I/O FALSE k.io <=> bus\n"+
		"k bit   I/O FALSE k.io2 <=> bus\n"+
		"k float OUT 0 k.out ==> fwd\n"+
		"k s32   OUT 0 k.update.time\n"+
		"\n", script(t, h, "show pin k."))
	assert.Equal(t, "k s32   IN -3 count\n\n", script(t, h, "show pin count"))
	assert.Equal(t, "k float RW 1.25 k.gain\n"+
		"k u32   RO 0 k.ro\n"+
		"k s32   RW 0 k.update.tmax\n"+
		"k bit   RO FALSE k.update.tmax-increased\n"+
		"\n", script(t, h, "show param k."))
	assert.Equal(t, "bit    FALSE  bus <=> k.io <=> k.io2\n"+
		"float  0  fwd ==> k.in ==> k.in2 <== k.out\n"+
		"s32    0  lone\n"+
		"\n", script(t, h, "show sig"))
	assert.Equal(t, "1000000 YES servo        0 1234\n k.update\n500000 YES base        0 0\n\n", script(t, h, "show thread"))
	assert.Regexp(t, `^k [0-9a-f]{8,} [0-9a-f]{8,} YES   1 k\.update\n\n$`, script(t, h, "show funct k."))
	assert.Regexp(t, `^ +\d+  RT    k {61}ready\n\n$`, script(t, h, "show comp k"))
	assert.Equal(t, " count  k.s\n\n\n", script(t, h, "show alias"))
	all := script(t, h, "show all")
	assert.NotContains(t, all, "Component Pins:")
	assert.True(t, strings.HasSuffix(all, "\n500000 YES base        0 0\n\n"), all)
	assert.Equal(t, must(t, h, "show thread"), func() string {
		var b bytes.Buffer
		c, _, _ := halfile.ParseLine("show thread")
		require.NoError(t, h.ExecWith(&b, c, hal.ExecOptions{}))
		return b.String()
	}(), "the zero ExecOptions print as Exec")
}
