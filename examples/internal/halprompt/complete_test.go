package halprompt

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

var testNames = Names{
	pins: []halItem{
		{name: "pid.0.command", typ: "float", dir: dirIn, signal: "pos-cmd"},
		{name: "pid.0.enable", typ: "bit", dir: dirIn},
		{name: "pid.0.feedback", typ: "float", dir: dirIn},
		{name: "pid.0.output", typ: "float", dir: dirOut},
		{name: "siggen.0.sine", typ: "float", dir: dirOut, signal: "pos-cmd"},
		{name: "siggen.0.square", typ: "float", dir: dirOut},
		{name: "io.0.bus", typ: "float", dir: dirIO},
	},
	params: []halItem{
		{name: "pid.0.Pgain", typ: "float", dir: dirRW},
		{name: "pid.0.errorI", typ: "float", dir: dirRO},
	},
	signals: []halSignal{
		{name: "enable", typ: "bit"},
		{name: "pos-cmd", typ: "float", writers: true},
		{name: "pos-fb", typ: "float"},
	},
	functs:  []halFunct{{name: "pid.0.do-pid-calcs", inUse: true}, {name: "siggen.0.update"}},
	threads: []string{"servo", "base"},
	comps:   []halComp{{name: "pid"}, {name: "hmi", user: true}},

	pinAliases:   []string{"speed"},
	paramAliases: []string{"kp"},
}

// complete offers what halcmd_completion.c offers, per verb and argument.
func TestCompleteAsLinuxCNC(t *testing.T) {
	t.Parallel()
	for buffer, want := range map[string][]string{
		"":                            commandTable,
		"s":                           {"setp", "sets", "stype", "show", "status", "save", "source", "start", "stop"},
		"  ne":                        {"net", "newsig"},
		"getp pid.0.P":                {"pid.0.Pgain"},
		"ptype pid.0.e":               {"pid.0.enable", "pid.0.errorI"},
		"setp pid.0.":                 {"pid.0.enable", "pid.0.feedback", "pid.0.Pgain"}, // not linked, OUT or RO
		"setp pid.0.Pgain=":           nil,
		"sets p":                      {"pos-cmd", "pos-fb"},
		"net ":                        {"enable", "pos-cmd", "pos-fb"},
		"net pos-cmd ":                {"pid.0.command", "pid.0.feedback", "io.0.bus"}, // float, and no second writer
		"net enable ":                 {"pid.0.enable"},
		"net newsig siggen.0.square ": {"pid.0.command", "pid.0.feedback", "io.0.bus"}, // joins an OUT pin: readers
		"net newsig pid.0.feedback ":  {"pid.0.command", "pid.0.feedback", "pid.0.output", "siggen.0.sine", "siggen.0.square", "io.0.bus"},
		"net pos-fb => pid.0.f":       {"pid.0.feedback"},
		"linkps siggen.0.square ":     {"pos-fb"}, // float, undriven
		"linksp enable pid":           {"pid.0.enable"},
		"alias ":                      {"param", "pin"},
		"alias pin pid.0.o":           {"pid.0.output"},
		"alias param pid.0.P":         {"pid.0.Pgain"},
		"unalias param k":             {"kp"},
		"unalias pin ":                {"speed"},
		"show ":                       showTable,
		"show p":                      {"pin", "param"},
		"show funct s":                {"siggen.0.update"},
		"list thread ":                {"servo", "base"},
		"list sig pos":                {"pos-cmd", "pos-fb"},
		"save n":                      {"net", "neta"},
		"status ":                     statusTable,
		"newsig x ":                   pintypeTable,
		"lock ":                       lockTable,
		"unlock ":                     unlockTable,
		"addf ":                       {"siggen.0.update"},
		"delf ":                       {"pid.0.do-pid-calcs"},
		"addf siggen.0.update s":      {"servo"},
		"help un":                     {"unload", "unlock", "unlinkp", "unalias"},
		"unloadusr ":                  {"hmi"},
		"unloadrt ":                   {"all", "pid"},
		"unload ":                     {"all", "pid", "hmi"},
		"unload h":                    {"hmi"},
		"waitusr h":                   {"hmi"},
		"loadrt ":                     nil,
		"bogus ":                      nil,
		"getp pid.0.Pgain ":           nil,
	} {
		assert.Equal(t, want, complete(buffer, testNames), "%q", buffer)
	}
}

// TAB completes one candidate with a blank, extends several to their
// common prefix, else lists them and keeps the line.
func TestTab(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line   string
		pos    int
		want   string
		newPos int
		list   []string
	}{
		{"getp pid.0.P", 12, "getp pid.0.Pgain ", 17, nil},
		{"show p", 6, "show p", 6, []string{"pin", "param"}},
		{"sets pos", 8, "sets pos-", 9, nil},
		{"getp pid.0.P x", 12, "getp pid.0.Pgain  x", 17, nil},
		{"frob", 4, "frob", 4, nil},
	} {
		line, pos, list := tab(tc.line, tc.pos, testNames)
		assert.Equal(t, tc.want, line, tc.line)
		assert.Equal(t, tc.newPos, pos, tc.line)
		assert.Equal(t, tc.list, list, tc.line)
	}
}

// parseNames reads the host's show and list answers.
func TestParseNames(t *testing.T) {
	t.Parallel()
	pins := "Component Pins:\nOwner   Type  Dir                 Value  Name\n" +
		"    10  float IN                      0  pid.0.command <== pos-cmd\n" +
		"    10  bit   I/O                 FALSE  pid.0.io\n\n"
	params := "Parameters:\nOwner   Type  Dir                 Value  Name\n    10  float RW                     50  pid.0.Pgain\n\n"
	sigs := "Signals:\nType                  Value  Name     (linked to)\n" +
		"float                     0  pos-cmd\n" + "                                 <== siggen.0.sine\n" +
		"                                 ==> pid.0.command\n" + "bit                   FALSE  enable\n\n"
	fns := "Exported Functions:\nOwner   CodeAddr      Arg           FP   Users   Name\n" +
		" 00010  004a5b20  c000123456  YES      1   pid.0.do-pid-calcs\n" +
		" 00011  004a5c40  c000123480  YES      0   siggen.0.update\n\n"
	comps := "Loaded HAL Components:\nID      Type  Name                                                    PID   State\n" +
		"    12  User  hmi                                                      4321 ready\n" +
		"    10  RT    pid                                                           ready\n\n"
	aliases := "Pin Aliases:\n Alias                                                    Original Name\n speed                                                    pid.0.command\n\n" +
		"Parameter Aliases:\n Alias                                                    Original Name\n\n"
	d := parseNames(pins, params, sigs, fns, comps, "base servo \n", aliases)
	assert.Equal(t, []halItem{{"pid.0.command", "float", dirIn, "pos-cmd"}, {"pid.0.io", "bit", dirIO, ""}}, d.pins)
	assert.Equal(t, []halItem{{"pid.0.Pgain", "float", dirRW, ""}}, d.params)
	assert.Equal(t, []halSignal{{"pos-cmd", "float", true}, {"enable", "bit", false}}, d.signals)
	assert.Equal(t, []halFunct{{"pid.0.do-pid-calcs", true}, {"siggen.0.update", false}}, d.functs)
	assert.Equal(t, []halComp{{"hmi", true}, {"pid", false}}, d.comps)
	assert.Equal(t, []string{"base", "servo"}, d.threads)
	assert.Equal(t, []string{"speed"}, d.pinAliases)
	assert.Nil(t, d.paramAliases)
}
