package hal_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
