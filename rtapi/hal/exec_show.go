package hal

import (
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

// Show prints HAL items as halcmd's show does: what is comp, pin, param,
// sig, funct, thread or all; pattern selects by name prefix or glob.
// Names and links come from the host's memory, values from the data
// tables (hostSnapshot); names are escaped (names.Escape).
func (h *HAL) Show(w io.Writer, what, pattern string) error {
	return h.show(w, what, []string{pattern}, false)
}

// show is halcmd's show (do_show_cmd): several patterns, each a prefix
// or a glob; for pin, sig and param a first pattern -tTYPE (or -t TYPE)
// selects a type, as get_type reads it.
func (h *HAL) show(w io.Writer, what string, patterns []string, script bool) error {
	switch what {
	case "comp", "pin", "param", "sig", "signal", "parameter":
		s, err := h.hostSnapshot("show")
		if err != nil {
			return err
		}
		var t Type
		if what != "comp" {
			t, patterns = showType(patterns)
		}
		return writeShow(w, what, "", filterSnapshot(s, t, patterns), script)
	case "funct", "function":
		return h.showFuncts(w, patterns, script)
	case "thread":
		return h.showThreads(w, patterns, script)
	case "alias":
		return h.showAliases(w, patterns, script, "pin", "param")
	case "all":
		s, err := h.hostSnapshot("show")
		if err != nil {
			return err
		}
		// LinuxCNC's order: comp, pin, pin aliases, sig, param, param aliases.
		s = filterSnapshot(s, 0, patterns)
		for _, k := range []string{"comp", "pin", "pin aliases", "sig", "param", "param aliases"} {
			switch k {
			case "pin aliases":
				err = h.showAliases(w, patterns, script, "pin")
			case "param aliases":
				err = h.showAliases(w, patterns, script, "param")
			default:
				err = writeShow(w, k, "", s, script)
			}
			if err != nil {
				return err
			}
		}
		if err := h.showFuncts(w, patterns, script); err != nil {
			return err
		}
		return h.showThreads(w, patterns, script)
	}
	return fmt.Errorf("show: unknown item %q (comp, pin, param, sig, funct, thread, alias, all): %w", what, rtapi.ErrInvalid)
}

// hostSnapshot is the host's own view of its data tables, for Show and
// Save: names (a pin's or parameter's alias in place of its name, as
// LinuxCNC renames an aliased item), owners, types, directions and links from the host's
// memory, in table order as View.Read gives them; only the values are
// loaded from the tables. Another process of the segment's group may
// rewrite names, links and counts there; the host never reads them back
// (docs/SECURITY.md). It takes h.mu.
func (h *HAL) hostSnapshot(op string) (Snapshot, error) {
	if err := h.lockOpen(op); err != nil {
		return Snapshot{}, err
	}
	defer h.mu.Unlock()
	return h.hostSnapshotLocked(), nil
}

// hostSnapshotLocked is hostSnapshot, called with h.mu on an open HAL.
// Freed slots (nil in the lists) are left out.
func (h *HAL) hostSnapshotLocked() Snapshot {
	pid := os.Getpid()
	pins := slices.DeleteFunc(slices.Clone(h.pinList), func(p *pin) bool { return p == nil })
	pars := slices.DeleteFunc(slices.Clone(h.parList), func(p *param) bool { return p == nil })
	s := Snapshot{HostPID: pid, Comps: make([]CompInfo, 0, len(h.comps)),
		Pins: make([]PinInfo, 0, len(pins)), Params: make([]ParamInfo, 0, len(pars))}
	for _, c := range h.comps {
		if !c.removed {
			s.Comps = append(s.Comps, CompInfo{Name: c.name, PID: c.pid, Ready: c.ready, User: c.user, ID: c.id})
		}
	}
	sigAt := make(map[*Signal]int, len(h.sigList)) // live signals' index in s.Signals
	for _, sig := range h.sigList {
		if sig != nil && h.sigs[sig.name] == sig {
			sigAt[sig] = len(s.Signals)
			s.Signals = append(s.Signals, SignalInfo{Name: sig.name, Type: sig.typ, slot: sig.index})
		}
	}
	for _, p := range pins {
		name := h.displayNameLocked(p.name)
		info := PinInfo{Owner: p.comp.name, OwnerID: p.comp.id, Name: name, Type: p.typ, Dir: p.dir}
		if i, ok := sigAt[p.sig]; ok && p.sig != nil {
			info.Signal = p.sig.name
			sig := &s.Signals[i]
			sig.Pins = append(sig.Pins, name)
			sig.Dirs = append(sig.Dirs, p.dir)
			if p.dir == Out {
				sig.Writer = name
			}
		}
		s.Pins = append(s.Pins, info)
	}
	for _, p := range pars {
		s.Params = append(s.Params, ParamInfo{Owner: p.comp.name, OwnerID: p.comp.id, Name: h.displayNameLocked(p.name), Type: p.typ, Dir: p.dir})
	}
	h.data.access(func() { // idempotent: loads only
		for i, p := range pins {
			w := p.own
			if p.sig != nil {
				w = p.sig.value
			}
			s.Pins[i].Value = atomic.LoadUint64(w)
		}
		for i, p := range pars {
			s.Params[i].Value = atomic.LoadUint64(p.ref.Load())
		}
		for i := range s.Signals {
			s.Signals[i].Value = atomic.LoadUint64(h.sigList[s.Signals[i].slot].value)
		}
	})
	return s
}

// WriteShow prints the components, pins, parameters or signals of a
// snapshot as LinuxCNC's halcmd show does (print_comp_info,
// print_pin_info, print_param_info, print_sig_info), byte for byte:
//
//	Component Pins:
//	Owner   Type  Dir                 Value  Name
//	    10  float IN                      0  pid.0.command <== pos-cmd
//
//	Signals:
//	Type                  Value  Name     (linked to)
//	float                     0  pos-cmd
//	                                 <== siggen.0.sine
//	                                 ==> pid.0.command
//
// Owner is the component's id (CompInfo.ID), values are 20 wide (u32 and
// u64 in hex, floats as %.7g), and each list ends with a blank line.
// Pins, parameters and signals are sorted by name, components newest
// (highest ID) first, as halcmd lists them. Names are printed
// escaped (names.Escape): one read from a data segment may hold anything.
func WriteShow(w io.Writer, what, pattern string, s Snapshot) error {
	return writeShow(w, what, pattern, s, false)
}

// writeShow is WriteShow, or with script the scriptmode formats of
// halcmd -s (ExecOptions.Script): no header lines; a pin "OWNER TYPE DIR
// VALUE NAME [ARROW SIGNAL]", a parameter "OWNER TYPE DIR VALUE NAME",
// a signal "TYPE  VALUE  NAME" and " ARROW PIN" for each of its pins on
// the same line, with TYPE 5 wide (data_type) and VALUE unpadded
// (querydata_refstr); components as without script.
func writeShow(w io.Writer, what, pattern string, s Snapshot, script bool) error {
	s = sortedSnapshot(filterSnapshot(s, 0, []string{pattern}))
	esc := names.Escape
	var b strings.Builder
	header := func(h string) {
		if !script {
			b.WriteString(h)
		}
	}
	item := func(owner string, ownerID int, t Type, d fmt.Stringer, v uint64, name string) {
		if script {
			fmt.Fprintf(&b, "%s %-5s %s %s %s", esc(owner), t, d, scriptValue(t, v), esc(name))
		} else {
			fmt.Fprintf(&b, " %5d  %-5s %-3s  %s  %s", ownerID, t, d, showValue(t, v), esc(name))
		}
	}
	switch what {
	case "comp":
		header(fmt.Sprintf("Loaded HAL Components:\nID      Type  %-*s PID   State\n", halNameLen, "Name"))
		for _, c := range s.Comps {
			state, kind, pid := "initializing", "RT", ""
			if c.Ready {
				state = "ready"
			}
			if c.User {
				kind, pid = "User", strconv.Itoa(c.PID)
			}
			fmt.Fprintf(&b, " %5d  %-4s  %-*s %5s %s\n", c.ID, kind, halNameLen, esc(c.Name), pid, state)
		}
	case "pin":
		header("Component Pins:\nOwner   Type  Dir                 Value  Name\n")
		for _, p := range s.Pins {
			item(p.Owner, p.OwnerID, p.Type, p.Dir, p.Value, p.Name)
			if p.Signal != "" {
				fmt.Fprintf(&b, " %s %s", pinArrow(p.Dir), esc(p.Signal))
			}
			b.WriteByte('\n')
		}
	case "param", "parameter":
		header("Parameters:\nOwner   Type  Dir                 Value  Name\n")
		for _, p := range s.Params {
			item(p.Owner, p.OwnerID, p.Type, p.Dir, p.Value, p.Name)
			b.WriteByte('\n')
		}
	case "sig", "signal":
		header("Signals:\nType                  Value  Name     (linked to)\n")
		for _, sig := range s.Signals {
			value, sep := scriptValue(sig.Type, sig.Value), " " // a pin per line unless script
			if !script {
				value, sep = showValue(sig.Type, sig.Value), "\n"+strings.Repeat(" ", 33)
			}
			fmt.Fprintf(&b, "%-5s  %s  %s", sig.Type, value, esc(sig.Name))
			for i, p := range sig.Pins {
				fmt.Fprintf(&b, "%s%s %s", sep, sigArrow(sig.Dirs[i]), esc(p))
			}
			b.WriteByte('\n')
		}
	default:
		return fmt.Errorf("show: unknown item %q: %w", what, rtapi.ErrInvalid)
	}
	b.WriteByte('\n')
	return writeOut(w, &b)
}

// scriptValue is halcmd's querydata_refstr: the value of a word of type
// t with no padding; u32 and u64 in decimal.
func scriptValue(t Type, v uint64) string {
	if f := math.Float64frombits(v); t == TypeFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return strings.ToLower(strings.TrimPrefix(strconv.FormatFloat(f, 'g', -1, 64), "+")) // C's nan, inf, -inf
	}
	if !t.valid() {
		return "unknown_type"
	}
	return FormatValue(t, v)
}

// halNameLen is LinuxCNC's HAL_NAME_LEN, show comp's name column width.
const halNameLen = 55

// showValue is halcmd's querydata_refstr_20: the value of a word of type
// t, right-aligned in 20 columns; u32 and u64 in upper-case hex.
func showValue(t Type, v uint64) string {
	switch {
	case t == TypeU32:
		return fmt.Sprintf("          0x%08X", uint32(v))
	case t == TypeU64:
		return fmt.Sprintf("  0x%016X", v)
	case !t.valid():
		return "        undef       "
	}
	return fmt.Sprintf("%20s", scriptValue(t, v))
}

func sortedSnapshot(s Snapshot) Snapshot {
	s.Comps = slices.Clone(s.Comps)
	s.Pins = slices.Clone(s.Pins)
	s.Params = slices.Clone(s.Params)
	s.Signals = slices.Clone(s.Signals)
	// LinuxCNC's hal_init puts each new component at the head of its list.
	slices.SortStableFunc(s.Comps, func(a, b CompInfo) int { return b.ID - a.ID })
	slices.SortStableFunc(s.Pins, func(a, b PinInfo) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(s.Params, func(a, b ParamInfo) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(s.Signals, func(a, b SignalInfo) int { return strings.Compare(a.Name, b.Name) })
	for i := range s.Signals {
		sig := &s.Signals[i]
		idx := make([]int, len(sig.Pins))
		for j := range idx {
			idx[j] = j
		}
		slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(sig.Pins[a], sig.Pins[b]) })
		pins, dirs := make([]string, len(idx)), make([]Dir, len(idx))
		for j, k := range idx {
			pins[j], dirs[j] = sig.Pins[k], sig.Dirs[k]
		}
		sig.Pins, sig.Dirs = pins, dirs
	}
	return s
}

// pinArrow is halcmd's data_arrow1 (the pin's view), sigArrow data_arrow2.
func pinArrow(d Dir) string {
	switch d {
	case In:
		return "<=="
	case Out:
		return "==>"
	}
	return "<=>"
}

func sigArrow(d Dir) string {
	switch d {
	case In:
		d = Out
	case Out:
		d = In
	}
	return pinArrow(d)
}

// showFuncts is halcmd's print_funct_info: the exported functions by
// name (hal_export_funct keeps its list sorted), each with its owner's
// id, the addresses of its code and of its closure (LinuxCNC's funct and
// arg), "YES" (every function may use floating point), the number of
// threads that call it and its name; then a blank line. In script mode
// (halcmd -s) the owner's name replaces the id and there are no headers.
func (h *HAL) showFuncts(w io.Writer, patterns []string, script bool) error {
	type row struct {
		name, comp string
		id, users  int
		code, arg  uintptr
	}
	if err := h.lockOpen("show"); err != nil {
		return err
	}
	var rows []row
	for _, f := range h.order {
		if !matchAny(patterns, f.name) {
			continue
		}
		r := row{name: f.name, arg: uintptr(unsafe.Pointer(f))}
		if f.fn != nil {
			r.code = reflect.ValueOf(f.fn).Pointer()
		} else {
			r.code = reflect.ValueOf(f.cfn).Pointer()
		}
		// The owner is the component that owns the function's .time pin
		// (functTimes).
		if p, ok := h.pins[f.name+".time"]; ok && p.comp != nil {
			r.comp, r.id = p.comp.name, p.comp.id
		}
		if f.thread != nil {
			r.users = 1
		}
		rows = append(rows, r)
	}
	h.mu.Unlock()
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	if !script {
		b.WriteString("Exported Functions:\nOwner   CodeAddr      Arg           FP   Users   Name\n")
	}
	for _, r := range rows {
		if script {
			fmt.Fprintf(&b, "%s %08x %08x %s %3d %s\n", names.Escape(r.comp), r.code, r.arg, "YES", r.users, names.Escape(r.name))
		} else {
			fmt.Fprintf(&b, " %05d  %08x  %08x  %-3s  %5d   %s\n", r.id, r.code, r.arg, "YES", r.users, names.Escape(r.name))
		}
	}
	b.WriteByte('\n')
	return writeOut(w, &b)
}

// showThreads is halcmd's print_thread_info: the threads, newest first
// (hal_create_thread puts a new thread at the head of its list), each
// with its period in ns, "YES", its name and its .time and .tmax (ns,
// times.go), then a line for each function it calls; then a blank line.
// In script mode (halcmd -s) there are no headers and a thread is
// "PERIOD YES NAME %8ld TMAX" and each function " NAME", each ended by
// a newline: halcmd_commands.cc writes the newline after each of its
// callbacks, the thread's and each function's.
func (h *HAL) showThreads(w io.Writer, patterns []string, script bool) error {
	type row struct {
		name       string
		period     int64
		time, tmax int32
		functs     []string
	}
	if err := h.lockOpen("show"); err != nil {
		return err
	}
	var rows []row
	for _, th := range slices.Backward(h.threads) {
		if !matchAny(patterns, th.name) {
			continue
		}
		r := row{name: th.name, period: th.period.Nanoseconds()}
		h.data.access(func() { r.time, r.tmax = th.times.time.Get(), th.times.tmax.Get() })
		for _, f := range th.chain.Load().functs {
			r.functs = append(r.functs, f.name)
		}
		rows = append(rows, r)
	}
	h.mu.Unlock()
	var b strings.Builder
	if !script {
		b.WriteString("Realtime Threads:\n     Period  FP     Name               (     Time, Max-Time )\n")
	}
	for _, r := range rows {
		if script {
			fmt.Fprintf(&b, "%d %s %s %8d %d\n", r.period, "YES", names.Escape(r.name), r.time, r.tmax)
		} else {
			fmt.Fprintf(&b, "%11d  %-3s  %20s ( %8d, %8d )\n", r.period, "YES", names.Escape(r.name), r.time, r.tmax)
		}
		for i, f := range r.functs {
			if script {
				fmt.Fprintf(&b, " %s\n", names.Escape(f))
			} else {
				fmt.Fprintf(&b, "                 %2d %s\n", i+1, names.Escape(f))
			}
		}
	}
	b.WriteByte('\n')
	return writeOut(w, &b)
}

// showAliases prints halcmd's "Pin Aliases:" and "Parameter Aliases:"
// lists (print_pin_aliases, print_param_aliases).
func (h *HAL) showAliases(w io.Writer, patterns []string, script bool, kinds ...string) error {
	if err := h.lockOpen("show"); err != nil {
		return err
	}
	width := halNameLen
	if script {
		width = 0 // unpadded
	}
	var b strings.Builder
	for _, kind := range kinds {
		title := map[string]string{"pin": "Pin Aliases:", "param": "Parameter Aliases:"}[kind]
		if !script {
			fmt.Fprintf(&b, "%s\n %-*s  %s\n", title, halNameLen, "Alias", "Original Name")
		}
		for _, r := range h.aliasRowsLocked(patterns, kind) {
			fmt.Fprintf(&b, " %-*s  %s\n", width, names.Escape(r.alias), names.Escape(r.name))
		}
		b.WriteByte('\n')
	}
	h.mu.Unlock()
	return writeOut(w, &b)
}

// matchAny is halcmd's match: true with no pattern, or when a pattern is
// a prefix of name or matches it as a shell glob.
func matchAny(patterns []string, name string) bool {
	if len(patterns) == 0 || patterns[0] == "" {
		return true
	}
	for _, p := range patterns {
		if p == "" {
			break
		}
		if strings.HasPrefix(name, p) {
			return true
		}
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// showType is halcmd's get_type: a first pattern "-tTYPE", or "-t" and
// TYPE, is taken off patterns and gives the type (bit, float, s32, u32,
// s64, u64, bool, real, sint, uint, signed, unsigned; another word: any
// type); 0 is any type.
func showType(patterns []string) (Type, []string) {
	if len(patterns) == 0 || !strings.HasPrefix(patterns[0], "-t") {
		return 0, patterns
	}
	word := patterns[0][2:]
	patterns = patterns[1:]
	if word == "" {
		if len(patterns) == 0 {
			return 0, patterns
		}
		word, patterns = patterns[0], patterns[1:]
	}
	return map[string]Type{"bit": TypeBit, "float": TypeFloat, "s32": TypeS32, "u32": TypeU32, "s64": TypeS64, "u64": TypeU64,
		"bool": TypeBit, "real": TypeFloat, "sint": TypeS64, "uint": TypeU64, "signed": TypeS32, "unsigned": TypeU32}[word], patterns
}

// filterSnapshot keeps the components, pins, parameters and signals of s
// that match patterns (matchAny) and, unless t is 0, are of type t.
func filterSnapshot(s Snapshot, t Type, patterns []string) Snapshot {
	ok := func(typ Type, name string) bool { return (t == 0 || typ == t) && matchAny(patterns, name) }
	s.Comps = slices.DeleteFunc(slices.Clone(s.Comps), func(c CompInfo) bool { return !matchAny(patterns, c.Name) })
	s.Pins = slices.DeleteFunc(slices.Clone(s.Pins), func(p PinInfo) bool { return !ok(p.Type, p.Name) })
	s.Params = slices.DeleteFunc(slices.Clone(s.Params), func(p ParamInfo) bool { return !ok(p.Type, p.Name) })
	s.Signals = slices.DeleteFunc(slices.Clone(s.Signals), func(g SignalInfo) bool { return !ok(g.Type, g.Name) })
	return s
}
