package halprompt

import (
	"strconv"
	"strings"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// Completion of halcmd's interactive prompt, as LinuxCNC's
// halcmd_completion.c completes: the verb first, then, per verb and
// argument, a table (show's kinds, lock's levels, ...) or the names of
// the host's pins, parameters, signals, functions, threads or
// components, filtered as LinuxCNC filters them (net offers the pins of
// the signal's type that may join it; setp the pins and parameters it
// may write).

// commandTable is halcmd_completion.c's command_table.
var commandTable = []string{
	"loadrt", "loadusr", "unload", "lock", "unlock",
	"linkps", "linksp", "unlinkp",
	"net", "newsig", "delsig", "getp", "gets", "setp", "sets", "ptype", "stype",
	"addf", "delf", "show", "list", "status", "save", "source",
	"start", "stop", "quit", "exit", "help", "alias", "unalias",
}

var (
	aliasTable   = []string{"param", "pin"}
	showTable    = []string{"all", "alias", "comp", "pin", "sig", "param", "funct", "thread"}
	saveTable    = []string{"all", "alias", "comp", "sig", "link", "linka", "net", "neta", "param", "thread"}
	listTable    = []string{"comp", "alias", "pin", "sig", "param", "funct", "thread"}
	statusTable  = []string{"alias", "lock", "mem", "all"}
	pintypeTable = []string{"bit", "float", "u32", "s32"}
	lockTable    = []string{"none", "tune", "all"}
	unlockTable  = []string{"tune", "all"}
)

// Directions as LinuxCNC's hal_pin_dir_t, so that its filters
// (direction_match, writer_match) read as there; dirAny is -1.
const (
	dirAny = -1
	dirIn  = 16
	dirOut = 32
	dirIO  = 48
	dirRO  = 64
	dirRW  = 192
)

// halItem is a pin or parameter as completion sees it.
type halItem struct {
	name, typ string
	dir       int
	signal    string // a pin's signal, "" if none
}

// halSignal is a signal as completion sees it.
type halSignal struct {
	name, typ string
	writers   bool
}

// halFunct is an exported function; inUse when a thread runs it.
type halFunct struct {
	name  string
	inUse bool
}

// halComp is a component; user when it runs in its own process.
type halComp struct {
	name string
	user bool
}

// Names is what completion offers, read from the host on each TAB.
type Names struct {
	pins, params []halItem
	signals      []halSignal
	functs       []halFunct
	threads      []string
	comps        []halComp
	// The aliases of pins and of parameters (unalias offers them).
	pinAliases, paramAliases []string
}

func isSkip(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c == '=' || c == '<' || c == '>'
}

// wordStart is where the word being completed begins in buffer (the
// line up to the cursor): after its last blank, "=", "<" or ">".
func wordStart(buffer string) int {
	for i := len(buffer) - 1; i >= 0; i-- {
		if isSkip(buffer[i]) {
			return i + 1
		}
	}
	return 0
}

// nextWord is the rest of s after its first blank and the blanks, "=",
// "<" and ">" that follow it, "" if s has no blank (LinuxCNC's nextword).
func nextWord(s string) string {
	i := strings.IndexByte(s, ' ')
	if i < 0 {
		return ""
	}
	s = s[i:]
	return strings.TrimLeft(s, " \t=<>")
}

// firstWord is s up to its first blank or tab.
func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}

// complete returns the words that may replace the word the cursor ends
// in buffer (the line up to the cursor), as halcmd_completer offers
// them: those that begin with it, in the host's list order.
func complete(buffer string, d Names) []string {
	// Leading blanks are not part of the line's words.
	for len(buffer) > 0 && isSkip(buffer[0]) {
		buffer = buffer[1:]
	}
	start := wordStart(buffer)
	text := buffer[start:]
	if start == 0 {
		return fromTable(text, commandTable)
	}
	argno := 0
	for i := 0; i < start; i++ {
		if isSkip(buffer[i]) {
			argno++
			for i < start && isSkip(buffer[i]) {
				i++
			}
		}
	}
	m := matcher{typ: "", writers: -1, dir: dirAny}
	verb := firstWord(buffer)
	arg1 := nextWord(buffer)
	switch {
	case verb == "delsig" && argno == 1, verb == "net" && argno == 1, verb == "linksp" && argno == 1,
		verb == "sets" && argno == 1, verb == "stype" && argno == 1, verb == "gets" && argno == 1:
		return m.signals(text, d)
	case verb == "linkps" && argno == 1, verb == "unlinkp" && argno == 1:
		return m.pins(text, d)
	case verb == "linkps" && argno == 2:
		m.matchPin(firstWord(arg1), d)
		return m.signals(text, d)
	case verb == "net" && argno == 2:
		m.matchSignal(firstWord(arg1), d)
		return m.pins(text, d)
	case verb == "net" && argno > 2:
		m.matchSignal(firstWord(arg1), d)
		if m.typ == "" {
			m.matchPin(firstWord(nextWord(arg1)), d)
			if m.dir == dirIn {
				m.dir = dirAny
			}
		}
		return m.pins(text, d)
	case verb == "linksp" && argno == 2:
		m.matchSignal(firstWord(arg1), d)
		return m.pins(text, d)
	case verb == "alias" || verb == "unalias":
		switch {
		case argno == 1:
			return fromTable(text, aliasTable)
		case argno == 2 && verb == "unalias" && strings.HasPrefix(arg1, "pin"):
			return fromTable(text, d.pinAliases)
		case argno == 2 && verb == "unalias" && strings.HasPrefix(arg1, "param"):
			return fromTable(text, d.paramAliases)
		case argno == 2 && strings.HasPrefix(arg1, "pin"):
			return m.pins(text, d)
		case argno == 2 && strings.HasPrefix(arg1, "param"):
			return m.params(text, d)
		}
	case verb == "setp" && argno == 1:
		var out []string
		for _, it := range append(append([]halItem(nil), d.pins...), d.params...) {
			if it.dir == dirOut || it.dir == dirRO || it.signal != "" {
				continue // not writable, or linked
			}
			if strings.HasPrefix(it.name, text) {
				out = append(out, it.name)
			}
		}
		return out
	case (verb == "ptype" || verb == "getp") && argno == 1:
		var out []string
		for _, it := range append(append([]halItem(nil), d.pins...), d.params...) {
			if strings.HasPrefix(it.name, text) {
				out = append(out, it.name)
			}
		}
		return out
	case verb == "list" || verb == "show":
		table := listTable
		if verb == "show" {
			table = showTable
		}
		switch {
		case argno == 1:
			return fromTable(text, table)
		case argno == 2 && strings.HasPrefix(arg1, "pin"):
			return m.pins(text, d)
		case argno == 2 && strings.HasPrefix(arg1, "sig"):
			return m.signals(text, d)
		case argno == 2 && strings.HasPrefix(arg1, "param"):
			return m.params(text, d)
		case argno == 2 && strings.HasPrefix(arg1, "funct"):
			return functs(text, d, false)
		case argno == 2 && strings.HasPrefix(arg1, "thread"):
			return fromTable(text, d.threads)
		}
	case verb == "save" && argno == 1:
		return fromTable(text, saveTable)
	case verb == "status" && argno == 1:
		return fromTable(text, statusTable)
	case verb == "newsig" && argno == 2:
		return fromTable(text, pintypeTable)
	case verb == "lock" && argno == 1:
		return fromTable(text, lockTable)
	case verb == "unlock" && argno == 1:
		return fromTable(text, unlockTable)
	case verb == "addf" && argno == 1:
		return functs(text, d, false)
	case verb == "delf" && argno == 1:
		return functs(text, d, true)
	case (verb == "addf" || verb == "delf") && argno == 2:
		return fromTable(text, d.threads)
	case verb == "help" && argno == 1:
		return fromTable(text, commandTable)
	case (verb == "unloadusr" || verb == "waitusr") && argno == 1:
		var out []string
		for _, c := range d.comps {
			if c.user && strings.HasPrefix(c.name, text) {
				out = append(out, c.name)
			}
		}
		return out
	case (verb == "unloadrt" || verb == "unload") && argno == 1:
		// rtcomp_generator, comp_generator: "all" first.
		var out []string
		if strings.HasPrefix("all", text) {
			out = append(out, "all")
		}
		for _, c := range d.comps {
			if (verb == "unload" || !c.user) && strings.HasPrefix(c.name, text) {
				out = append(out, c.name)
			}
		}
		return out
	}
	return nil
}

func fromTable(text string, table []string) []string {
	var out []string
	for _, w := range table {
		if strings.HasPrefix(w, text) {
			out = append(out, w)
		}
	}
	return out
}

func functs(text string, d Names, inUse bool) []string {
	var out []string
	for _, f := range d.functs {
		if f.inUse == inUse && strings.HasPrefix(f.name, text) {
			out = append(out, f.name)
		}
	}
	return out
}

// matcher holds halcmd_completion.c's match_type, match_writers and
// match_direction: what the words before the cursor ask of a name.
type matcher struct {
	typ     string // "": any
	writers int    // -1: any; else 1 when the signal has a writer
	dir     int    // dirAny: any
}

// matchPin is check_match_type_pin: the type and direction of pin name.
func (m *matcher) matchPin(name string, d Names) {
	for _, p := range d.pins {
		if p.name == name {
			m.typ, m.dir = p.typ, p.dir
			return
		}
	}
}

// matchSignal is check_match_type_signal: the type of signal name and
// whether it has a writer.
func (m *matcher) matchSignal(name string, d Names) {
	for _, s := range d.signals {
		if s.name == name {
			m.typ, m.writers = s.typ, 0
			if s.writers {
				m.writers = 1
			}
			return
		}
	}
}

// directionMatch and writerMatch are halcmd_completion.c's.
func directionMatch(dir1, dir2 int) bool {
	return dir1 == dirAny || dir2 == dirAny || dir1|dir2 == dirIO
}

func writerMatch(dir, writers int) bool {
	return writers == -1 || dir == dirAny || dir&dirIn != 0 || writers == 0
}

func (m matcher) pins(text string, d Names) []string {
	var out []string
	for _, p := range d.pins {
		if !writerMatch(p.dir, m.writers) || !directionMatch(p.dir, m.dir) || (m.typ != "" && m.typ != p.typ) {
			continue
		}
		if strings.HasPrefix(p.name, text) {
			out = append(out, p.name)
		}
	}
	return out
}

func (m matcher) params(text string, d Names) []string {
	var out []string
	for _, p := range d.params {
		if strings.HasPrefix(p.name, text) {
			out = append(out, p.name)
		}
	}
	return out
}

func (m matcher) signals(text string, d Names) []string {
	var out []string
	for _, s := range d.signals {
		if m.typ != "" && m.typ != s.typ {
			continue
		}
		w := 0
		if s.writers {
			w = 1
		}
		if !writerMatch(m.dir, w) {
			continue
		}
		if strings.HasPrefix(s.name, text) {
			out = append(out, s.name)
		}
	}
	return out
}

// commonPrefix is the longest prefix of every word in words.
func commonPrefix(words []string) string {
	if len(words) == 0 {
		return ""
	}
	p := words[0]
	for _, w := range words[1:] {
		for !strings.HasPrefix(w, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// parseNames reads completion's names from the host's answers to show
// pin, show param, show sig, show funct, show comp, list thread and
// show alias (hal.WriteShow's formats, list's and show alias's).
func parseNames(pins, params, sigs, fns, comps, threads, aliases string) Names {
	var d Names
	dirs := map[string]int{"IN": dirIn, "OUT": dirOut, "I/O": dirIO, "RO": dirRO, "RW": dirRW}
	rows := func(text string, into *[]halItem) {
		for _, line := range strings.Split(text, "\n") {
			f := strings.Fields(line)
			if len(f) < 5 {
				continue
			}
			if _, err := strconv.Atoi(f[0]); err != nil {
				continue
			}
			dir, ok := dirs[f[2]]
			if !ok {
				continue
			}
			it := halItem{name: f[4], typ: f[1], dir: dir}
			if len(f) == 7 {
				it.signal = f[6]
			}
			*into = append(*into, it)
		}
	}
	rows(pins, &d.pins)
	rows(params, &d.params)
	for _, line := range strings.Split(sigs, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && !strings.HasPrefix(line, " "):
			d.signals = append(d.signals, halSignal{name: f[2], typ: f[0]})
		case len(f) == 2 && strings.HasPrefix(line, " ") && f[0] == "<==" && len(d.signals) > 0:
			d.signals[len(d.signals)-1].writers = true
		}
	}
	numeric := func(s string) bool { _, err := strconv.Atoi(s); return err == nil }
	// show funct: " OWNER  CODE  ARG  YES  USERS   NAME" (print_funct_info).
	for _, line := range strings.Split(fns, "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && numeric(f[0]) && f[3] == "YES" && numeric(f[4]) {
			d.functs = append(d.functs, halFunct{name: f[5], inUse: f[4] != "0"})
		}
	}
	for _, c := range ParseShowComp(comps) {
		d.comps = append(d.comps, halComp{name: c.Name, user: c.User})
	}
	d.threads = strings.Fields(threads)
	var into *[]string
	for _, line := range strings.Split(aliases, "\n") {
		f := strings.Fields(line)
		switch {
		case line == "Pin Aliases:":
			into = &d.pinAliases
		case line == "Parameter Aliases:":
			into = &d.paramAliases
		case into != nil && len(f) == 2 && strings.HasPrefix(line, " ") && !(f[0] == "Alias" && strings.Contains(line, "Original Name")):
			*into = append(*into, f[0])
		}
	}
	return d
}

// ParseShowComp reads the rows of "show comp" (hal.WriteShow): ID, Type
// (RT or User), Name, PID (User rows only, as LinuxCNC's halcmd prints
// it), State.
func ParseShowComp(text string) []hal.CompInfo {
	var out []hal.CompInfo
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		id, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		c := hal.CompInfo{ID: id, Name: f[2], User: f[1] == "User", Ready: f[len(f)-1] == "ready"}
		switch {
		case f[1] == "RT" && len(f) == 4:
		case f[1] == "User" && len(f) == 5:
			if c.PID, err = strconv.Atoi(f[3]); err != nil {
				continue
			}
		default:
			continue
		}
		out = append(out, c)
	}
	return out
}
