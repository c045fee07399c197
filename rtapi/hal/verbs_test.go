package hal_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// run runs one halcmd line on h and returns what it printed.
func run(t *testing.T, h *hal.HAL, line string) (string, error) {
	t.Helper()
	c, ok, err := halfile.ParseLine(line)
	require.NoError(t, err, line)
	require.True(t, ok, line)
	var out bytes.Buffer
	err = h.Exec(&out, c)
	return out.String(), err
}

// must runs line and fails the test on an error.
func must(t *testing.T, h *hal.HAL, line string) string {
	t.Helper()
	out, err := run(t, h, line)
	require.NoError(t, err, line)
	return out
}

// verbsHAL is a small HAL for the halcmd verbs: component k with pins of
// each direction, parameters RW and RO, a function in thread servo
// (made after thread base), signals with and without pins.
func verbsHAL(t *testing.T) *hal.HAL {
	h := newHAL(t, hal.Options{})
	c, err := h.NewComponent("k")
	require.NoError(t, err)
	c.Float("k.in", hal.In)
	c.Float("k.in2", hal.In)
	c.Bit("k.io", hal.IO)
	c.Bit("k.io2", hal.IO)
	c.Float("k.out", hal.Out)
	c.S32("k.s", hal.In)
	c.FloatParam("k.gain", hal.RW)
	c.U32Param("k.ro", hal.RO)
	c.Export("k.update", nop)
	require.NoError(t, c.Ready())
	_, err = h.NewThread("base", 500*time.Microsecond)
	require.NoError(t, err)
	_, err = h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	must(t, h, "addf k.update servo")
	must(t, h, "net fwd k.out => k.in k.in2")
	must(t, h, "net bus k.io k.io2")
	must(t, h, "newsig lone s32")
	must(t, h, "setp k.gain 1.25")
	must(t, h, "setp k.s -3")
	return h
}

// list prints names as LinuxCNC's halcmd list: space after each, one
// line; by prefix or glob, several patterns. Before, "list" was an
// unknown command.
func TestListAsHalcmd(t *testing.T) {
	h := verbsHAL(t)
	for line, want := range map[string]string{
		"list pin k.":           "k.in k.in2 k.io k.io2 k.out k.s k.update.time \n",
		"list pin k.i*2 k.o":    "k.in2 k.io2 k.out \n",
		"list sig":              "bus fwd lone \n",
		"list signal f":         "fwd \n",
		"list param k.":         "k.gain k.ro k.update.tmax k.update.tmax-increased \n",
		"list parameter k.g":    "k.gain \n",
		"list funct":            "k.update \n",
		"list function nomatch": "\n",
		"list thread":           "servo base \n",
		"list comp k":           "k \n",
	} {
		assert.Equal(t, want, must(t, h, line), line)
	}
	_, err := run(t, h, "list bogus")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.Contains(t, err.Error(), "Unknown 'list' type 'bogus'")
	_, _, err = halfile.ParseLine("list")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
}

// ptype and stype print a type as LinuxCNC's data_type2; unknown and
// overlong names are refused in its words.
func TestPtypeStype(t *testing.T) {
	h := verbsHAL(t)
	assert.Equal(t, "float\n", must(t, h, "ptype k.in"))
	assert.Equal(t, "bit\n", must(t, h, "ptype k.io"))
	assert.Equal(t, "u32\n", must(t, h, "ptype k.ro"))
	assert.Equal(t, "s32\n", must(t, h, "stype lone"))
	assert.Equal(t, "bit\n", must(t, h, "stype bus"))
	long := strings.Repeat("x", 300)
	for line, msg := range map[string]string{
		"ptype nope":    "parameter or pin 'nope': not found",
		"ptype fwd":     "parameter or pin 'fwd': not found",
		"ptype " + long: "parameter or pin '" + long + "': not found",
		"stype nope":    "signal 'nope': not found",
		"stype k.in":    "signal 'k.in': not found",
		"stype " + long: "signal '" + long + "': not found",
	} {
		_, err := run(t, h, line)
		require.ErrorIs(t, err, rtapi.ErrInvalid, line)
		assert.Contains(t, err.Error(), msg)
	}
	for _, bad := range []string{"ptype", "ptype a b", "stype", "stype a b"} {
		_, _, err := halfile.ParseLine(bad)
		require.ErrorIs(t, err, rtapi.ErrInvalid, bad)
	}
}

// lock and unlock set LinuxCNC's levels; a locked HAL refuses what
// LinuxCNC refuses, in its words, and status lock says so.
func TestLockRefusesAsLinuxCNC(t *testing.T) {
	registerTestComps()
	h := verbsHAL(t)
	assert.Equal(t, "HAL locking status:\n  current lock value 0 (00)\n  HAL_LOCK_NONE - nothing is locked\n", must(t, h, "status lock"))

	must(t, h, "lock")
	assert.Equal(t, "HAL locking status:\n  current lock value 255 (ff)\n"+
		"  HAL_LOCK_LOAD    - loading of new components is locked\n"+
		"  HAL_LOCK_CONFIG  - link and addf is locked\n"+
		"  HAL_LOCK_PARAMS  - setting params is locked\n"+
		"  HAL_LOCK_RUN     - running/stopping HAL is locked\n", must(t, h, "status lock"))
	for line, msg := range map[string]string{
		"loadrt tpart":         "HAL is locked, loading of modules is not permitted",
		"net fwd k.s":          "link called while HAL locked",
		"net new k.s":          "signal_new called while HAL is locked",
		"linkps k.s lone":      "link called while HAL locked",
		"unlinkp k.in":         "unlink called while HAL locked",
		"newsig x float":       "signal_new called while HAL is locked",
		"delsig lone":          "signal_delete called while HAL locked",
		"addf k.update base":   "add_funct_to_thread called while HAL is locked",
		"delf k.update servo":  "del_funct_from_thread called while HAL is locked",
		"alias pin k.in speed": "pin_alias called while HAL locked",
		"unalias param k.gain": "param_alias called while HAL locked",
		"start":                "start_threads called while HAL is locked",
		"stop":                 "stop_threads called while HAL is locked",
		"safep servo k.in 0":   "safep called while HAL is locked",
	} {
		_, err := run(t, h, line)
		require.ErrorIs(t, err, rtapi.ErrPermission, line)
		assert.Contains(t, err.Error(), msg, line)
	}
	// LinuxCNC's setp and sets (hal_set_p, hal_set_s) check no lock.
	must(t, h, "setp k.gain 2")
	must(t, h, "sets lone 4")
	assert.Equal(t, "4\n", must(t, h, "gets lone"))

	must(t, h, "unlock tune") // all but LOAD and CONFIG stay
	assert.Contains(t, must(t, h, "status lock"), "current lock value 252 (fc)\n")
	must(t, h, "net cnt k.s")
	must(t, h, "unlock")
	assert.Contains(t, must(t, h, "status"), "HAL_LOCK_NONE")
	must(t, h, "lock tune")
	assert.Contains(t, must(t, h, "status lock"), "current lock value 3 (03)\n")
	must(t, h, "start")
	must(t, h, "stop")
	_, err := run(t, h, "net fwd k.s")
	require.ErrorIs(t, err, rtapi.ErrPermission)
	must(t, h, "lock none")
	must(t, h, "newsig x float")

	for _, bad := range []string{"lock bogus", "unlock load"} {
		_, err := run(t, h, bad)
		require.ErrorIs(t, err, rtapi.ErrInvalid, bad)
	}
	for _, bad := range []string{"lock a b", "unlock a b", "status a b"} {
		_, _, err := halfile.ParseLine(bad)
		require.ErrorIs(t, err, rtapi.ErrInvalid, bad)
	}
}

// status mem counts items as hal_statistics does; an unknown kind is
// refused in halcmd's words.
func TestStatusMem(t *testing.T) {
	h := verbsHAL(t)
	out := must(t, h, "status mem")
	assert.True(t, strings.HasPrefix(out, "HAL memory status\n  used/total shared memory:   "), out)
	assert.Contains(t, out, "  active/recycled signals:    3/0\n")
	assert.Contains(t, out, "  active/recycled threads:    2/0\n")
	assert.Contains(t, out, "  active/recycled aliases:    0/0\n")
	must(t, h, "delsig lone")
	assert.Contains(t, must(t, h, "status mem"), "  active/recycled signals:    2/1\n")
	all := must(t, h, "status all")
	assert.True(t, strings.HasPrefix(all, "HAL locking status:\n"), all)
	assert.Contains(t, all, "HAL memory status\n")
	_, err := run(t, h, "status bogus")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.Contains(t, err.Error(), "Unknown 'status' type 'bogus'")
}

// An alias renames a pin or parameter in show, list and save, as
// LinuxCNC's does; every command finds the item by either name.
func TestAliasAsLinuxCNC(t *testing.T) {
	h := verbsHAL(t)
	must(t, h, "alias pin k.in speed")
	must(t, h, "alias param k.gain kp")
	_, err := run(t, h, "setp speed 3") // linked: refused as for k.in
	require.Error(t, err)
	must(t, h, "setp kp 7")
	assert.Equal(t, "7\n", must(t, h, "getp k.gain"))
	assert.Equal(t, "7\n", must(t, h, "getp kp"))
	assert.Equal(t, "float\n", must(t, h, "ptype speed"))
	assert.Equal(t, "k.in2 k.io k.io2 k.out k.s k.update.time speed \n", must(t, h, "list pin k. sp"))
	assert.Contains(t, must(t, h, "show pin speed"), "speed <== fwd\n")
	assert.Contains(t, must(t, h, "show sig fwd"), "==> speed\n")
	assert.Equal(t, "Pin Aliases:\n Alias"+strings.Repeat(" ", 50)+"  Original Name\n speed"+strings.Repeat(" ", 50)+"  k.in\n\n"+
		"Parameter Aliases:\n Alias"+strings.Repeat(" ", 50)+"  Original Name\n kp"+strings.Repeat(" ", 53)+"  k.gain\n\n",
		must(t, h, "show alias"))
	assert.Equal(t, "# pin aliases\nalias pin k.in speed\n# param aliases\nalias param k.gain kp\n", must(t, h, "save alias"))
	must(t, h, "unlinkp speed")
	must(t, h, "net fwd speed")

	// A second alias replaces the first; the first name still works.
	must(t, h, "alias pin speed velocity")
	assert.Equal(t, "k.in2 velocity \n", must(t, h, "list pin k.in2 v"))
	assert.Equal(t, "float\n", must(t, h, "ptype k.in"))
	_, err = run(t, h, "ptype speed")
	require.Error(t, err)

	for line, msg := range map[string]string{
		"alias foo k.in x":                           `type "foo" is neither pin nor param`,
		"alias pin nope x":                           "pin 'nope' not found",
		"alias param k.in x":                         "param 'k.in' not found",
		"alias pin k.in2 k.out":                      "duplicate pin/alias name 'k.out'",
		"alias pin k.in2 kp":                         "duplicate pin/alias name 'kp'",
		"alias param k.ro k.in":                      "duplicate parameter/alias name 'k.in'",
		"alias pin k.in2 " + strings.Repeat("a", 48): "longer than 47",
		"unalias pin nope":                           "pin 'nope' not found",
		"unalias bar k.in":                           `type "bar" is neither pin nor param`,
	} {
		_, err := run(t, h, line)
		require.ErrorIs(t, err, rtapi.ErrInvalid, line)
		assert.Contains(t, err.Error(), msg, line)
	}
	for _, bad := range []string{"alias pin k.in", "alias pin a b c", "unalias pin", "unalias pin a b"} {
		_, _, err := halfile.ParseLine(bad)
		require.ErrorIs(t, err, rtapi.ErrInvalid, bad)
	}

	// save (every digit) loads back with its aliases.
	var saved bytes.Buffer
	require.NoError(t, h.Save(&saved))
	assert.Contains(t, saved.String(), "alias pin k.in velocity\nalias param k.gain kp\n")
	h2 := newHAL(t, hal.Options{})
	c, err := h2.NewComponent("k")
	require.NoError(t, err)
	c.Float("k.in", hal.In)
	c.Float("k.in2", hal.In)
	c.Bit("k.io", hal.IO)
	c.Bit("k.io2", hal.IO)
	c.Float("k.out", hal.Out)
	c.S32("k.s", hal.In)
	c.FloatParam("k.gain", hal.RW)
	c.U32Param("k.ro", hal.RO)
	c.Export("k.update", nop)
	require.NoError(t, c.Ready())
	_, err = h2.NewThread("base", 500*time.Microsecond)
	require.NoError(t, err)
	_, err = h2.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	cmds, err := halfile.Parse("saved.hal", strings.NewReader(saved.String()))
	require.NoError(t, err)
	require.NoError(t, h2.Load(io.Discard, cmds))
	var again bytes.Buffer
	require.NoError(t, h2.Save(&again))
	assert.Equal(t, saved.String(), again.String())

	must(t, h, "unalias pin velocity")
	assert.Equal(t, "k.in \n", must(t, h, "list pin k.i[n] velocity"))
	must(t, h, "unalias param k.gain")
	must(t, h, "unalias param k.gain") // none: left alone
	assert.Equal(t, "# pin aliases\n# param aliases\n", must(t, h, "save alias"))
}

// save KIND prints what LinuxCNC's do_save_cmd prints, byte for byte.
// Before, every KIND printed gortapi's whole save.
func TestSaveKindsAsLinuxCNC(t *testing.T) {
	h := verbsHAL(t)
	v := func(s string) string { return strings.Repeat(" ", 20-len(s)) + s }
	nets3 := "# nets\nnet bus k.io <=> k.io2\nnet fwd k.out => k.in k.in2\n"
	params := "# parameter values\nsetp base.tmax " + v("0") + "\nsetp k.gain " + v("1.25") + "\nsetp k.update.tmax " + v("0") + "\nsetp servo.tmax " + v("0") + "\n"
	threads := "# realtime thread/function links\naddf k.update servo\n"
	comps := "# components\n#loadrt k  (not loaded by loadrt, no args saved)\n" // made by NewComponent
	unconnected := "# unconnected pin values\nsetp k.s " + v("-3") + "\n"
	for kind, want := range map[string]string{
		"comp":              comps,
		"alias":             "# pin aliases\n# param aliases\n",
		"sig":               "# signals\nnewsig bus bit  \nnewsig fwd float\nnewsig lone s32  \n",
		"signal":            "# signals\nnewsig bus bit  \nnewsig fwd float\nnewsig lone s32  \n",
		"sigu":              "# signals\nnewsig bus bit  \nnewsig lone s32  \n",
		"link":              "# links\nlinkps k.in  fwd\nlinkps k.in2  fwd\nlinkps k.io  bus\nlinkps k.io2  bus\nlinkps k.out  fwd\n",
		"linka":             "# links\nlinkps k.in <== fwd\nlinkps k.in2 <== fwd\nlinkps k.io <=> bus\nlinkps k.io2 <=> bus\nlinkps k.out ==> fwd\n",
		"net":               "# nets\nnewsig bus bit  \nlinksp bus  k.io\nlinksp bus  k.io2\nnewsig fwd float\nlinksp fwd  k.in\nlinksp fwd  k.in2\nlinksp fwd  k.out\nnewsig lone s32  \n",
		"neta":              "# nets\nnewsig bus bit  \nlinksp bus <=> k.io\nlinksp bus <=> k.io2\nnewsig fwd float\nlinksp fwd ==> k.in\nlinksp fwd ==> k.in2\nlinksp fwd <== k.out\nnewsig lone s32  \n",
		"netl":              "# nets\nnet bus k.io k.io2\nnet fwd k.in k.in2 k.out\n",
		"netla":             nets3,
		"netal":             nets3,
		"param":             params,
		"parameter":         params,
		"thread":            threads,
		"unconnectedinpins": unconnected,
		"all":               comps + "# pin aliases\n# param aliases\n# signals\nnewsig bus bit  \nnewsig lone s32  \n" + nets3 + params + threads,
		"allu":              comps + "# pin aliases\n# param aliases\n# signals\nnewsig bus bit  \nnewsig lone s32  \n" + nets3 + params + unconnected + threads,
	} {
		assert.Equal(t, want, must(t, h, "save "+kind), kind)
	}
	_, err := run(t, h, "save bogus")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.Contains(t, err.Error(), "Unknown 'save' type 'bogus'")
	_, _, err = halfile.ParseLine("save all a b")
	require.ErrorIs(t, err, rtapi.ErrInvalid)

	// save KIND FILE writes FILE, as halcmd's does.
	file := filepath.Join(t.TempDir(), "out.hal")
	assert.Equal(t, "", must(t, h, "save thread "+file))
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, threads, string(b))
	_, err = run(t, h, "save thread "+filepath.Join(t.TempDir(), "no", "such", "dir"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Can't open 'save' destination")
}

// save comp prints the loadrt lines, oldest first, as LinuxCNC's
// save_comps; a load with no arguments ends in a blank as there.
func TestSaveCompAsLinuxCNC(t *testing.T) {
	registerTestComps()
	h := newHAL(t, hal.Options{})
	must(t, h, "loadrt tpart pins=2")
	assert.Equal(t, "# components\nloadrt tpart pins=2\n", must(t, h, "save comp"))
	h2 := newHAL(t, hal.Options{})
	must(t, h2, "loadrt tpart")
	assert.Equal(t, "# components\nloadrt tpart \n", must(t, h2, "save comp"))
	c, err := h2.NewComponent("mine")
	require.NoError(t, err)
	require.NoError(t, c.Ready())
	assert.Equal(t, "# components\nloadrt tpart \n#loadrt mine  (not loaded by loadrt, no args saved)\n", must(t, h2, "save comp"))
}

// help, echo and unecho print LinuxCNC's texts.
func TestHelpEchoAsLinuxCNC(t *testing.T) {
	h := verbsHAL(t)
	out := must(t, h, "help")
	assert.True(t, strings.HasPrefix(out, "Use 'help <command>' for more details about each command\nAvailable commands:\n  loadrt              Load realtime module(s)\n"), out)
	assert.True(t, strings.HasSuffix(out, "  quit, exit          Exit from halcmd\n"), out)
	assert.Equal(t, "ptype paramname\nptype pinname\n  Gets the type of parameter 'paramname' or pin 'pinname'.\n", must(t, h, "help ptype"))
	assert.Equal(t, must(t, h, "help linkps"), must(t, h, "help linksp"))
	assert.Equal(t, "If you need help to use 'help', then I can't help you.\n", must(t, h, "help help"))
	assert.Equal(t, "No help for unknown command 'bogus'\n", must(t, h, "help bogus"))
	assert.Equal(t, "Echo on\n", must(t, h, "echo"))
	assert.Equal(t, "Echo off\n", must(t, h, "unecho"))
	for _, bad := range []string{"help a b", "echo x", "unecho x"} {
		_, _, err := halfile.ParseLine(bad)
		require.ErrorIs(t, err, rtapi.ErrInvalid, bad)
	}
}

// show all lists the alias sections where LinuxCNC's does.
func TestShowAllHasAliasSections(t *testing.T) {
	h := verbsHAL(t)
	must(t, h, "alias pin k.s count")
	out := must(t, h, "show all")
	pin := strings.Index(out, "Component Pins:")
	pa := strings.Index(out, "Pin Aliases:")
	sig := strings.Index(out, "Signals:")
	par := strings.Index(out, "Parameters:")
	paa := strings.Index(out, "Parameter Aliases:")
	require.True(t, pin >= 0 && pa > pin && sig > pa && par > sig && paa > par, out)
	assert.Contains(t, out, " count"+strings.Repeat(" ", 50)+"  k.s\n")
}

// show takes several patterns and, for pin, sig and param, a first
// pattern -tTYPE or -t TYPE, as LinuxCNC's get_type. Before, show took
// one pattern and read "-tbit" as a name prefix.
func TestShowPatternsAndType(t *testing.T) {
	h := verbsHAL(t)
	rows := func(out string) []string {
		var names []string
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) >= 5 && (f[2] == "IN" || f[2] == "OUT" || f[2] == "I/O" || f[2] == "RW" || f[2] == "RO") {
				names = append(names, f[4])
			}
		}
		return names
	}
	assert.Equal(t, []string{"k.io", "k.io2"}, rows(must(t, h, "show pin -tbit k.")))
	assert.Equal(t, []string{"k.in", "k.in2"}, rows(must(t, h, "show pin -t float k.i")))
	assert.Equal(t, []string{"k.s", "k.update.time"}, rows(must(t, h, "show pin -tsigned k.")))
	assert.Equal(t, []string{"k.gain"}, rows(must(t, h, "show param -tbogus k.g")))
	assert.Equal(t, []string{"k.in2", "k.out"}, rows(must(t, h, "show pin k.in2 k.o*")))
	sigs := must(t, h, "show sig -t s32 bus lone")
	assert.Contains(t, sigs, "lone\n")
	assert.NotContains(t, sigs, "bus\n")
	fns := must(t, h, "show funct nomatch k.up")
	assert.Contains(t, fns, "k.update\n")
}

// TestLoadStartThenLock: a file that starts the threads and then locks
// the HAL runs in order, as LinuxCNC's halcmd runs it: the start is not
// held back past the lock (where the lock would refuse it).
func TestLoadStartThenLock(t *testing.T) {
	registerTestComps()
	h := verbsHAL(t)
	cmds, err := halfile.Parse("f.hal", strings.NewReader("start\nlock all\n"))
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	assert.True(t, h.Running())
	_, err = run(t, h, "stop")
	require.ErrorIs(t, err, rtapi.ErrPermission, "the lock holds")
	must(t, h, "unlock all")
	must(t, h, "stop")
}
