package hal

import (
	"errors"
	"fmt"
	"io"
	"maps"
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
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Exec runs one parsed command on the HAL, as halcmd would, writing what
// it prints (getp, gets, show, save) to w. Errors carry the command's
// FILE:LINE (a *halfile.Error) and match rtapi's sentinels. Set-up code.
func (h *HAL) Exec(w io.Writer, c halfile.Command) error {
	return c.At(h.exec(w, c, ExecOptions{}))
}

// ExecOptions change what Exec prints; the zero value prints as halcmd
// does by default.
type ExecOptions struct {
	// Script prints show as LinuxCNC's halcmd -s (scriptmode) does: no
	// header lines, and each item in the scriptmode format of
	// halcmd_commands.cc's print_*_info (values unpadded, a pin's and a
	// parameter's owner by name, a signal and its pins on one line).
	Script bool
}

// ExecWith is Exec with options o.
func (h *HAL) ExecWith(w io.Writer, c halfile.Command, o ExecOptions) error {
	return c.At(h.exec(w, c, o))
}

func (h *HAL) exec(w io.Writer, c halfile.Command, o ExecOptions) error {
	if err := h.checkLock(c.Verb, c.Args); err != nil {
		return err
	}
	a := h.resolveAliases(c.Verb, c.Args)
	switch c.Verb {
	case "loadrt":
		return h.LoadRT(a[0], a[1:]...)
	case "unloadrt", "unload":
		return h.unloadVerb(c.Verb, a[0])
	case "addf":
		pos := Last
		if len(a) == 3 {
			n, _ := strconv.Atoi(a[2]) // checked by the parser
			var err error
			if pos, err = h.addfPosition(a[0], a[1], n); err != nil {
				return err
			}
		}
		return h.AddFunct(a[0], a[1], pos)
	case "delf":
		th := ""
		if len(a) == 2 {
			th = a[1]
		} else if f, ok := h.Funct(a[0]); ok {
			h.mu.Lock()
			if f.thread != nil {
				th = f.thread.name
			}
			h.mu.Unlock()
		}
		return h.RemoveFunct(a[0], th)
	case "net":
		return h.Net(a[0], a[1:]...)
	case "newsig":
		t, err := ParseType(a[1])
		if err != nil {
			return err
		}
		return h.NewSignal(a[0], t)
	case "delsig":
		if a[0] == "all" {
			return h.deleteAllSignals()
		}
		return h.DeleteSignal(a[0])
	case "linkps":
		return h.Link(a[0], a[1])
	case "setp":
		return h.SetP(a[0], a[1])
	case "sets":
		return h.SetS(a[0], a[1])
	case "safep":
		return h.SafeP(a[0], a[1], a[2])
	case "getp", "gets":
		get := h.GetP
		if c.Verb == "gets" {
			get = h.GetS
		}
		v, err := get(a[0])
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, v)
		return err
	case "unlinkp":
		return h.Unlink(a[0])
	case "start":
		return h.Start()
	case "stop":
		return h.Stop()
	case "show":
		what := "all"
		if len(a) > 0 {
			what = a[0]
		}
		var patterns []string
		if len(a) > 1 {
			patterns = a[1:]
		}
		return h.show(w, what, patterns, o.Script)
	case "save":
		kind, file := "", ""
		if len(a) > 0 {
			kind = a[0]
		}
		if len(a) > 1 {
			file = a[1]
		}
		return h.saveTo(w, kind, file)
	case "list":
		return h.list(w, a[0], a[1:])
	case "ptype":
		return h.ptype(w, a[0])
	case "stype":
		return h.stype(w, a[0])
	case "status":
		return h.status(w, optArg(a))
	case "help":
		_, err := io.WriteString(w, halfile.Help(optArg(a)))
		return err
	case "echo":
		_, err := io.WriteString(w, "Echo on\n")
		return err
	case "unecho":
		_, err := io.WriteString(w, "Echo off\n")
		return err
	case "alias":
		return h.alias(a[0], a[1], a[2])
	case "unalias":
		return h.unalias(a[0], a[1])
	case "lock", "unlock":
		return h.setLock(c.Verb, optArg(a))
	}
	return fmt.Errorf("unknown command %q: %w", c.Verb, rtapi.ErrInvalid)
}

// deleteAllSignals is halcmd's "delsig all": every signal is deleted, in
// name order; none is an error.
func (h *HAL) deleteAllSignals() error {
	h.mu.Lock()
	all := slices.Sorted(maps.Keys(h.sigs))
	h.mu.Unlock()
	if len(all) == 0 {
		return errf("delsig", "", "", rtapi.ErrInvalid, "no signals found to be deleted")
	}
	for _, name := range all {
		if err := h.DeleteSignal(name); err != nil {
			return err
		}
	}
	return nil
}

// addfPosition turns addf's position n into a Position as
// hal_add_funct_to_thread counts: 1 is first, 2 second, ...; -1 last, -2
// before the last, ...; 0 and positions past either end of the thread's
// chain are refused, in its words. A missing function or thread is left
// to AddFunct to report.
func (h *HAL) addfPosition(funct, thread string, n int) (Position, error) {
	const op = "add funct"
	if n == 0 {
		return Last, errf(op, thread, funct, rtapi.ErrInvalid, "bad position: 0")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	th := h.thread(thread)
	if _, ok := h.functs[funct]; !ok || th == nil {
		return Last, nil
	}
	return addfIndex(n, len(th.chain.Load().functs), thread, funct)
}

// addfIndex is the index in a chain of length l that addf's position n
// (not 0) puts a function at.
func addfIndex(n, l int, thread, funct string) (Position, error) {
	const op = "add funct"
	switch {
	case n > l+1:
		return Last, errf(op, thread, funct, rtapi.ErrInvalid, "position '%d' is too high", n)
	case n < -(l + 1):
		return Last, errf(op, thread, funct, rtapi.ErrInvalid, "position '%d' is too low", n)
	case n > 0:
		return At(n - 1), nil
	}
	return At(l + 1 + n), nil
}

// Load runs a parsed .hal file. start and stop take effect after every
// other command, as the last of them says, so a file that fails has
// started nothing; a lock or unlock after them applies them first, as
// LinuxCNC runs the file in order. The error names FILE:LINE; the HAL is
// then left as the failing command left it, to be closed (halrun does).
func (h *HAL) Load(w io.Writer, cmds []halfile.Command) error {
	var run *halfile.Command
	for i, c := range cmds {
		if c.Verb == "start" || c.Verb == "stop" {
			run = &cmds[i]
			continue
		}
		if run != nil && FlushesStart(c.Verb) {
			if err := h.Exec(w, *run); err != nil {
				return err
			}
			run = nil
		}
		if err := h.Exec(w, c); err != nil {
			return err
		}
	}
	if run != nil {
		return h.Exec(w, *run)
	}
	return nil
}

// FlushesStart reports whether verb, in a .hal file, first applies a
// start or stop written before it (held back until the file's end
// otherwise): true for lock and unlock, whose effect on start depends on
// the order.
func FlushesStart(verb string) bool { return verb == "lock" || verb == "unlock" }

// match says whether name is shown for pattern: "" shows all, a pattern
// with * ? or [ is a glob, anything else a prefix (as halcmd matches).
func match(pattern, name string) bool {
	if pattern == "" {
		return true
	}
	if strings.ContainsAny(pattern, "*?[") {
		ok, _ := path.Match(pattern, name)
		return ok
	}
	return strings.HasPrefix(name, pattern)
}

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
		return h.showAliases(w, patterns, true, true, script)
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
				err = h.showAliases(w, patterns, true, false, script)
			case "param aliases":
				err = h.showAliases(w, patterns, false, true, script)
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
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkOpen(op, "", ""); err != nil {
		return Snapshot{}, err
	}
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
	s = sortedSnapshot(s)
	esc := names.Escape
	var b strings.Builder
	switch what {
	case "comp":
		if !script {
			fmt.Fprintf(&b, "Loaded HAL Components:\nID      Type  %-*s PID   State\n", halNameLen, "Name")
		}
		for _, c := range s.Comps {
			if !match(pattern, c.Name) {
				continue
			}
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
		if !script {
			b.WriteString("Component Pins:\nOwner   Type  Dir                 Value  Name\n")
		}
		for _, p := range s.Pins {
			if !match(pattern, p.Name) {
				continue
			}
			if script {
				fmt.Fprintf(&b, "%s %-5s %s %s %s", esc(p.Owner), p.Type, p.Dir, scriptValue(p.Type, p.Value), esc(p.Name))
			} else {
				fmt.Fprintf(&b, " %5d  %-5s %-3s  %s  %s", p.OwnerID, p.Type, p.Dir, showValue(p.Type, p.Value), esc(p.Name))
			}
			if p.Signal != "" {
				fmt.Fprintf(&b, " %s %s", pinArrow(p.Dir), esc(p.Signal))
			}
			b.WriteByte('\n')
		}
	case "param", "parameter":
		if !script {
			b.WriteString("Parameters:\nOwner   Type  Dir                 Value  Name\n")
		}
		for _, p := range s.Params {
			switch {
			case !match(pattern, p.Name):
			case script:
				fmt.Fprintf(&b, "%s %-5s %s %s %s\n", esc(p.Owner), p.Type, p.Dir, scriptValue(p.Type, p.Value), esc(p.Name))
			default:
				fmt.Fprintf(&b, " %5d  %-5s %-3s  %s  %s\n", p.OwnerID, p.Type, p.Dir, showValue(p.Type, p.Value), esc(p.Name))
			}
		}
	case "sig", "signal":
		if !script {
			b.WriteString("Signals:\nType                  Value  Name     (linked to)\n")
		}
		for _, sig := range s.Signals {
			if !match(pattern, sig.Name) {
				continue
			}
			if script {
				fmt.Fprintf(&b, "%-5s  %s  %s", sig.Type, scriptValue(sig.Type, sig.Value), esc(sig.Name))
				for i, p := range sig.Pins {
					fmt.Fprintf(&b, " %s %s", sigArrow(sig.Dirs[i]), esc(p))
				}
				b.WriteByte('\n')
				continue
			}
			fmt.Fprintf(&b, "%-5s  %s  %s\n", sig.Type, showValue(sig.Type, sig.Value), esc(sig.Name))
			for i, p := range sig.Pins {
				fmt.Fprintf(&b, "%32s %s %s\n", "", sigArrow(sig.Dirs[i]), esc(p))
			}
		}
	default:
		return fmt.Errorf("show: unknown item %q: %w", what, rtapi.ErrInvalid)
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// scriptValue is halcmd's querydata_refstr: the value of a word of type
// t with no padding; u32 and u64 in decimal.
func scriptValue(t Type, v uint64) string {
	switch t {
	case TypeBit:
		if v != 0 {
			return "TRUE"
		}
		return "FALSE"
	case TypeFloat:
		f := math.Float64frombits(v)
		switch {
		case math.IsNaN(f):
			return "nan" // fmt's spelling, not Go's
		case math.IsInf(f, 1):
			return "inf"
		case math.IsInf(f, -1):
			return "-inf"
		}
		return strconv.FormatFloat(f, 'g', 7, 64)
	case TypeS32:
		return strconv.FormatInt(int64(int32(v)), 10)
	case TypeS64:
		return strconv.FormatInt(int64(v), 10)
	case TypeU32:
		return strconv.FormatUint(uint64(uint32(v)), 10)
	case TypeU64:
		return strconv.FormatUint(v, 10)
	}
	return "unknown_type"
}

// halNameLen is LinuxCNC's HAL_NAME_LEN, show comp's name column width.
const halNameLen = 55

// showValue is halcmd's querydata_refstr_20: the value of a word of type
// t, right-aligned in 20 columns; u32 and u64 in upper-case hex.
func showValue(t Type, v uint64) string {
	switch t {
	case TypeBit:
		if v != 0 {
			return fmt.Sprintf("%20s", "TRUE")
		}
		return fmt.Sprintf("%20s", "FALSE")
	case TypeFloat:
		f := math.Float64frombits(v)
		switch {
		case math.IsNaN(f):
			return fmt.Sprintf("%20s", "nan") // fmt's spelling, not Go's
		case math.IsInf(f, 1):
			return fmt.Sprintf("%20s", "inf")
		case math.IsInf(f, -1):
			return fmt.Sprintf("%20s", "-inf")
		}
		return fmt.Sprintf("%20.7g", f)
	case TypeS32:
		return fmt.Sprintf("%20d", int32(v))
	case TypeS64:
		return fmt.Sprintf("%20d", int64(v))
	case TypeU32:
		return fmt.Sprintf("          0x%08X", uint32(v))
	case TypeU64:
		return fmt.Sprintf("  0x%016X", v)
	}
	return "        undef       "
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
		return "==>"
	case Out:
		return "<=="
	}
	return "<=>"
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
	h.mu.Lock()
	if err := h.checkOpen("show", "", ""); err != nil {
		h.mu.Unlock()
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
	_, err := io.WriteString(w, b.String())
	return err
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
	h.mu.Lock()
	if err := h.checkOpen("show", "", ""); err != nil {
		h.mu.Unlock()
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
	_, err := io.WriteString(w, b.String())
	return err
}

// Save prints a .hal file that rebuilds the HAL's wiring (halcmd save
// with no KIND): loadrt lines, aliases, signals and links, values of RW parameters, unlinked
// input pins and undriven signals, each thread's functions and safep
// lines (a Go safe state as a comment), and start if the threads run.
// Names and links come from the host's memory, values from the data
// tables (hostSnapshot); every line parses back (halfile) to the command
// it was printed from.
func (h *HAL) Save(w io.Writer) error {
	h.mu.Lock()
	if err := h.checkOpen("save", "", ""); err != nil {
		h.mu.Unlock()
		return err
	}
	s := h.hostSnapshotLocked()
	var b strings.Builder
	line := func(verb string, args ...string) {
		for i, a := range args {
			args[i] = names.Escape(a)
		}
		b.WriteString(halfile.Command{Verb: verb, Args: args}.String() + "\n")
	}
	b.WriteString("# components\n")
	for _, l := range h.loaded {
		b.WriteString(halfile.Command{Verb: "loadrt", Args: l}.String() + "\n")
	}
	for _, al := range h.aliasRowsLocked(nil, true, true) {
		line("alias", al.kind, al.name, al.alias)
	}
	b.WriteString("# signals\n")
	for _, sig := range s.Signals {
		if len(sig.Pins) == 0 {
			line("newsig", sig.Name, sig.Type.String())
			continue
		}
		args := []string{sig.Name}
		if sig.Writer != "" {
			args = append(args, sig.Writer)
		}
		for _, p := range sig.Pins {
			if p != sig.Writer {
				args = append(args, p)
			}
		}
		line("net", args...)
	}
	b.WriteString("# parameter values\n")
	for _, p := range s.Params {
		if p.Dir == RW {
			line("setp", p.Name, exact(p.Type, p.Value))
		}
	}
	for _, p := range s.Pins {
		if p.Dir != Out && p.Signal == "" {
			line("setp", p.Name, exact(p.Type, p.Value))
		}
	}
	for _, sig := range s.Signals {
		if sig.Writer == "" {
			line("sets", sig.Name, exact(sig.Type, sig.Value))
		}
	}
	b.WriteString("# realtime thread/function links\n")
	for _, th := range h.threads {
		for _, f := range th.chain.Load().functs {
			line("addf", f.name, th.name)
		}
	}
	b.WriteString("# safe states\n")
	for _, th := range h.threads {
		if p := th.safe.Load(); p != nil {
			for _, st := range *p {
				if st.pin == "" {
					fmt.Fprintf(&b, "# thread %s: safe state %s is a Go function\n", names.Escape(th.name), names.Escape(st.name))
					continue
				}
				line("safep", th.name, st.pin, exact(st.typ, st.word))
			}
		}
	}
	if h.running {
		b.WriteString("start\n")
	}
	h.mu.Unlock()
	_, err := io.WriteString(w, b.String())
	return err
}

// exact prints a value for Save, floats with every digit.
func exact(t Type, w uint64) string {
	if t == TypeFloat {
		return strconv.FormatFloat(math.Float64frombits(w), 'g', -1, 64)
	}
	return FormatValue(t, w)
}

// optArg is a verb's optional first argument, "" when absent.
func optArg(a []string) string {
	if len(a) == 0 {
		return ""
	}
	return a[0]
}

// LinuxCNC's HAL_LOCK_* bits (hal.h), set by halcmd's lock and unlock.
const (
	lockLoad   = 1 // loadrt (and halcmd's loadusr) refused
	lockConfig = 2 // net, linkps, unlinkp, newsig, delsig, addf, delf, alias, safep refused
	lockParams = 4 // no command checks it (LinuxCNC's setp no longer does)
	lockRun    = 8 // start and stop refused
	lockTune   = lockLoad | lockConfig
	lockAll    = 255
)

// lockLevel is the lock that halcmd's verb ("lock" or "unlock") with
// word leaves, from the lock cur: lock [all|none|tune] and unlock
// [all|none|tune] as do_lock_cmd and do_unlock_cmd set it. ok is false
// for another word, which LinuxCNC ignores ("Locking completed").
func lockLevel(verb, word string, cur uint8) (lock uint8, ok bool) {
	switch word {
	case "", "all":
		if verb == "lock" {
			return lockAll, true
		}
		return 0, true
	case "none":
		return 0, true
	case "tune":
		if verb == "lock" {
			return lockTune, true
		}
		return cur &^ lockTune, true
	}
	return cur, false
}

// lockRefusal is LinuxCNC's message refusing verb under lock, "" when
// lock allows it: halcmd's own for loadrt, hal_lib's for the others.
// sigExists says whether net's signal exists (net makes it otherwise).
func lockRefusal(lock uint8, verb string, sigExists bool) string {
	switch verb {
	case "loadrt":
		if lock&lockLoad != 0 {
			return "HAL is locked, loading of modules is not permitted"
		}
	case "start", "stop":
		if lock&lockRun != 0 {
			return verb + "_threads called while HAL is locked"
		}
	case "net", "linkps", "unlinkp", "newsig", "delsig", "addf", "delf", "safep":
		if lock&lockConfig == 0 {
			return ""
		}
		switch verb {
		case "net", "linkps":
			if verb == "net" && !sigExists {
				return "signal_new called while HAL is locked"
			}
			return "link called while HAL locked"
		case "unlinkp":
			return "unlink called while HAL locked"
		case "newsig":
			return "signal_new called while HAL is locked"
		case "delsig":
			return "signal_delete called while HAL locked"
		case "addf":
			return "add_funct_to_thread called while HAL is locked"
		case "delf":
			return "del_funct_from_thread called while HAL is locked"
		}
		return verb + " called while HAL is locked" // safep, gortapi's own
	}
	return ""
}

// checkLock refuses a command the HAL's lock forbids (ErrPermission).
// The lock binds commands (Exec: .hal files, halcmd), not Go calls.
func (h *HAL) checkLock(verb string, args []string) error {
	h.mu.Lock()
	lock := h.lock
	sigExists := false
	if verb == "net" && len(args) > 0 {
		_, sigExists = h.sigs[args[0]]
	}
	h.mu.Unlock()
	if msg := lockRefusal(lock, verb, sigExists); msg != "" {
		return errf(verb, "", "", rtapi.ErrPermission, "%s", msg)
	}
	return nil
}

// setLock runs halcmd's lock or unlock.
func (h *HAL) setLock(verb, word string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkOpen(verb, "", ""); err != nil {
		return err
	}
	l, ok := lockLevel(verb, word, h.lock)
	if !ok {
		return errf(verb, "", "", rtapi.ErrInvalid, "level %q is none of all, tune, none", word)
	}
	h.lock = l
	return nil
}

// resolveAliases returns args with each pin or parameter alias where
// verb takes a pin or parameter name replaced by the item's name, as
// LinuxCNC finds a pin or parameter by its name or its alias.
func (h *HAL) resolveAliases(verb string, args []string) []string {
	from, to := 0, 1
	switch verb {
	case "setp", "getp", "ptype", "linkps", "unlinkp":
	case "safep":
		from, to = 1, 2
	case "net":
		from, to = 1, len(args)
	default:
		return args
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.aliases) == 0 {
		return args
	}
	out := slices.Clone(args)
	for i := from; i < to && i < len(out); i++ {
		out[i] = h.realNameLocked(out[i])
	}
	return out
}

// realNameLocked is the pin or parameter that name names: itself, else
// the item name is the alias of. Called with h.mu.
func (h *HAL) realNameLocked(name string) string {
	if _, ok := h.pins[name]; ok {
		return name
	}
	if _, ok := h.params[name]; ok {
		return name
	}
	if orig, ok := h.aliases[name]; ok {
		return orig
	}
	return name
}

// displayNameLocked is the name show, list and save print for the pin
// or parameter name: its alias if it has one. Called with h.mu.
func (h *HAL) displayNameLocked(name string) string {
	if a, ok := h.aliasOf[name]; ok {
		return a
	}
	return name
}

// aliasKind is "pin" or "param" for the verbs alias and unalias, or an
// error naming the word.
func aliasKind(op, kind string) error {
	if kind == "pin" || kind == "param" {
		return nil
	}
	return errf(op, "", "", rtapi.ErrInvalid, "type %q is neither pin nor param", kind)
}

// itemLocked finds the pin or parameter (kind) that name names, by its
// name or its alias: its name. Called with h.mu.
func (h *HAL) itemLocked(kind, name string) (string, bool) {
	real := h.realNameLocked(name)
	var ok bool
	if kind == "pin" {
		_, ok = h.pins[real]
	} else {
		_, ok = h.params[real]
	}
	return real, ok
}

// alias runs halcmd's "alias pin|param NAME ALIAS" (hal_pin_alias,
// hal_param_alias): NAME, by its name or its alias, takes ALIAS as its
// new name in show, list and save; every command finds it by either.
// A second alias replaces the first.
func (h *HAL) alias(kind, name, alias string) error {
	const op = "alias"
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.aliasAllowedLocked(op, kind); err != nil {
		return err
	}
	if err := names.Check(kind+" alias", alias); err != nil {
		return &Error{Op: op, Err: errors.Join(err, rtapi.ErrInvalid)}
	}
	_, pin := h.pins[alias]
	_, par := h.params[alias]
	_, ali := h.aliases[alias]
	if pin || par || ali {
		what := map[string]string{"pin": "pin", "param": "parameter"}[kind]
		return errf(op, "", "", rtapi.ErrInvalid, "duplicate %s/alias name '%s'", what, alias)
	}
	real, ok := h.itemLocked(kind, name)
	if !ok {
		return errf(op, "", "", rtapi.ErrInvalid, "%s '%s' not found", kind, name)
	}
	if h.aliases == nil {
		h.aliases, h.aliasOf = map[string]string{}, map[string]string{}
	}
	if old, ok := h.aliasOf[real]; ok {
		delete(h.aliases, old)
	}
	h.aliases[alias], h.aliasOf[real] = real, alias
	return nil
}

// unalias runs halcmd's "unalias pin|param NAME": NAME, by its name or
// its alias, goes back to its name; one without an alias is left alone.
func (h *HAL) unalias(kind, name string) error {
	const op = "unalias"
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.aliasAllowedLocked(op, kind); err != nil {
		return err
	}
	real, ok := h.itemLocked(kind, name)
	if !ok {
		return errf(op, "", "", rtapi.ErrInvalid, "%s '%s' not found", kind, name)
	}
	if a, ok := h.aliasOf[real]; ok {
		delete(h.aliases, a)
		delete(h.aliasOf, real)
	}
	return nil
}

// aliasAllowedLocked checks what alias and unalias share: an open HAL,
// kind pin or param, no CONFIG lock (LinuxCNC's "X_alias called while
// HAL locked"). Called with h.mu.
func (h *HAL) aliasAllowedLocked(op, kind string) error {
	if err := h.checkOpen(op, "", ""); err != nil {
		return err
	}
	if err := aliasKind(op, kind); err != nil {
		return err
	}
	if h.lock&lockConfig != 0 {
		return errf(op, "", "", rtapi.ErrPermission, "%s_alias called while HAL locked", kind)
	}
	return nil
}

// aliasRow is one alias: kind "pin" or "param", the item's name, its alias.
type aliasRow struct{ kind, name, alias string }

// aliasRowsLocked lists the aliases of pins and parameters that exist,
// pins first, each kind sorted by alias (LinuxCNC's lists are sorted by
// name, and an alias is the item's name there), those whose name or
// alias matches pattern. Called with h.mu.
func (h *HAL) aliasRowsLocked(patterns []string, pins, params bool) []aliasRow {
	var rows []aliasRow
	for _, kind := range []string{"pin", "param"} {
		if (kind == "pin" && !pins) || (kind == "param" && !params) {
			continue
		}
		var part []aliasRow
		for real, a := range h.aliasOf {
			_, ok := h.itemLocked(kind, real)
			if ok && (matchAny(patterns, a) || matchAny(patterns, real)) {
				part = append(part, aliasRow{kind, real, a})
			}
		}
		slices.SortFunc(part, func(x, y aliasRow) int { return strings.Compare(x.alias, y.alias) })
		rows = append(rows, part...)
	}
	return rows
}

// showAliases prints halcmd's "Pin Aliases:" and "Parameter Aliases:"
// lists (print_pin_aliases, print_param_aliases).
func (h *HAL) showAliases(w io.Writer, patterns []string, pins, params, script bool) error {
	h.mu.Lock()
	if err := h.checkOpen("show", "", ""); err != nil {
		h.mu.Unlock()
		return err
	}
	var b strings.Builder
	for _, kind := range []string{"pin", "param"} {
		if (kind == "pin" && !pins) || (kind == "param" && !params) {
			continue
		}
		title := map[string]string{"pin": "Pin Aliases:", "param": "Parameter Aliases:"}[kind]
		if !script {
			fmt.Fprintf(&b, "%s\n %-*s  %s\n", title, halNameLen, "Alias", "Original Name")
		}
		for _, r := range h.aliasRowsLocked(patterns, kind == "pin", kind == "param") {
			if script {
				fmt.Fprintf(&b, " %s  %s\n", names.Escape(r.alias), names.Escape(r.name))
			} else {
				fmt.Fprintf(&b, " %-*s  %s\n", halNameLen, names.Escape(r.alias), names.Escape(r.name))
			}
		}
		b.WriteByte('\n')
	}
	h.mu.Unlock()
	_, err := io.WriteString(w, b.String())
	return err
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

// list runs halcmd's "list KIND [PATTERN...]" (do_list_cmd): the names
// of one kind of item, each followed by a space, on one line. Pins,
// parameters, signals and functions come sorted by name, components
// newest first, threads newest first, as LinuxCNC's lists hold them.
func (h *HAL) list(w io.Writer, kind string, patterns []string) error {
	const op = "list"
	var all []string
	switch kind {
	case "comp", "pin", "sig", "signal", "param", "parameter":
		s, err := h.hostSnapshot(op)
		if err != nil {
			return err
		}
		s = sortedSnapshot(s)
		switch kind {
		case "comp":
			for _, c := range s.Comps {
				all = append(all, c.Name)
			}
		case "pin":
			for _, p := range s.Pins {
				all = append(all, p.Name)
			}
		case "sig", "signal":
			for _, sig := range s.Signals {
				all = append(all, sig.Name)
			}
		default:
			for _, p := range s.Params {
				all = append(all, p.Name)
			}
		}
	case "funct", "function":
		for _, f := range h.Functs() {
			all = append(all, f.name)
		}
		slices.Sort(all)
	case "thread":
		h.mu.Lock()
		for i := len(h.threads) - 1; i >= 0; i-- {
			all = append(all, h.threads[i].name)
		}
		h.mu.Unlock()
	default:
		return errf(op, "", "", rtapi.ErrInvalid, "Unknown 'list' type '%s'", kind)
	}
	var b strings.Builder
	for _, n := range all {
		if matchAny(patterns, n) {
			b.WriteString(names.Escape(n))
			b.WriteByte(' ')
		}
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// ptype prints the type of a pin or parameter (do_ptype_cmd).
func (h *HAL) ptype(w io.Writer, name string) error {
	h.mu.Lock()
	if err := h.checkOpen("ptype", "", ""); err != nil {
		h.mu.Unlock()
		return err
	}
	real := h.realNameLocked(name)
	var t Type
	if p, ok := h.pins[real]; ok {
		t = p.typ
	} else if p, ok := h.params[real]; ok {
		t = p.typ
	}
	h.mu.Unlock()
	if t == 0 {
		return errf("ptype", "", "", rtapi.ErrInvalid, "parameter or pin '%s': not found", name)
	}
	_, err := fmt.Fprintln(w, t)
	return err
}

// stype prints the type of a signal (do_stype_cmd).
func (h *HAL) stype(w io.Writer, name string) error {
	h.mu.Lock()
	if err := h.checkOpen("stype", "", ""); err != nil {
		h.mu.Unlock()
		return err
	}
	s, ok := h.sigs[name]
	h.mu.Unlock()
	if !ok {
		return errf("stype", "", "", rtapi.ErrInvalid, "signal '%s': not found", name)
	}
	_, err := fmt.Fprintln(w, s.typ)
	return err
}

// status runs halcmd's "status [lock|mem|all]" (do_status_cmd).
func (h *HAL) status(w io.Writer, kind string) error {
	const op = "status"
	if kind != "" && kind != "all" && kind != "lock" && kind != "mem" {
		return errf(op, "", "", rtapi.ErrInvalid, "Unknown 'status' type '%s'", kind)
	}
	h.mu.Lock()
	if err := h.checkOpen(op, "", ""); err != nil {
		h.mu.Unlock()
		return err
	}
	var b strings.Builder
	if kind != "mem" {
		writeLockStatus(&b, h.lock)
	}
	if kind != "lock" {
		writeMemStatus(&b, h.memStatusLocked())
	}
	h.mu.Unlock()
	_, err := io.WriteString(w, b.String())
	return err
}

// writeLockStatus is print_lock_status.
func writeLockStatus(b *strings.Builder, lock uint8) {
	fmt.Fprintf(b, "HAL locking status:\n  current lock value %d (%02x)\n", lock, lock)
	if lock == 0 {
		b.WriteString("  HAL_LOCK_NONE - nothing is locked\n")
	}
	if lock&lockLoad != 0 {
		b.WriteString("  HAL_LOCK_LOAD    - loading of new components is locked\n")
	}
	if lock&lockConfig != 0 {
		b.WriteString("  HAL_LOCK_CONFIG  - link and addf is locked\n")
	}
	if lock&lockParams != 0 {
		b.WriteString("  HAL_LOCK_PARAMS  - setting params is locked\n")
	}
	if lock&lockRun != 0 {
		b.WriteString("  HAL_LOCK_RUN     - running/stopping HAL is locked\n")
	}
}

// memStatus is hal_statistics: bytes of the data segment's tables in
// use and in all, and of each kind of item, how many are live and how
// many freed slots wait for reuse.
type memStatus struct {
	used, total                                    int
	comps, pins, params, aliases, sigs, fns, thrds [2]int
}

// memStatusLocked counts h's items. Called with h.mu.
func (h *HAL) memStatusLocked() memStatus {
	var m memStatus
	for _, c := range h.comps {
		if c == nil || c.removed {
			m.comps[1]++
		} else {
			m.comps[0]++
		}
	}
	count := func(live bool, into *[2]int) {
		if live {
			into[0]++
		} else {
			into[1]++
		}
	}
	for _, p := range h.pinList {
		count(p != nil, &m.pins)
	}
	for _, p := range h.parList {
		count(p != nil, &m.params)
	}
	for _, s := range h.sigList {
		count(s != nil && h.sigs[s.name] == s, &m.sigs)
	}
	m.aliases[0] = len(h.aliasRowsLocked(nil, true, true))
	m.fns[0] = len(h.functs)
	m.thrds[0] = len(h.threads)
	m.total = sizeofData()
	free := (MaxComps-m.comps[0])*int(unsafe.Sizeof(compEntry{})) +
		(MaxPins-m.pins[0])*int(unsafe.Sizeof(pinEntry{})) +
		(MaxParams-m.params[0])*int(unsafe.Sizeof(paramEntry{})) +
		(MaxSignals-m.sigs[0])*int(unsafe.Sizeof(sigEntry{}))
	m.used = max(m.total-free, 0)
	return m
}

// writeMemStatus is print_mem_status.
func writeMemStatus(b *strings.Builder, m memStatus) {
	b.WriteString("HAL memory status\n")
	fmt.Fprintf(b, "  used/total shared memory:   %d/%d\n", m.used, m.total)
	for _, r := range []struct {
		what string
		n    [2]int
	}{{"components: ", m.comps}, {"pins:       ", m.pins}, {"parameters: ", m.params},
		{"aliases:    ", m.aliases}, {"signals:    ", m.sigs}, {"functions:  ", m.fns}, {"threads:    ", m.thrds}} {
		fmt.Fprintf(b, "  active/recycled %s%d/%d\n", r.what, r.n[0], r.n[1])
	}
}

// saveTo runs halcmd's "save [KIND] [FILE]": to w, or to FILE (made or
// truncated) when one is given. KIND "" is Save; any other is SaveKind.
func (h *HAL) saveTo(w io.Writer, kind, file string) error {
	if file != "" {
		f, err := os.Create(file)
		if err != nil {
			return errf("save", "", "", rtapi.ErrInvalid, "Can't open 'save' destination '%s': %v", file, err)
		}
		err = h.saveTo(f, kind, "")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if kind == "" {
		return h.Save(w)
	}
	return h.SaveKind(w, kind)
}

// SaveKinds are the KINDs SaveKind takes, as halcmd's save does.
var SaveKinds = []string{"all", "allu", "comp", "alias", "sig", "signal", "sigu", "link", "linka",
	"net", "neta", "netl", "netla", "netal", "param", "parameter", "thread", "unconnectedinpins"}

// SaveKind prints one part of the HAL as halcmd's "save KIND" does
// (do_save_cmd in LinuxCNC's halcmd_commands.cc), byte for byte: comp
// (loadrt lines, oldest first), alias, sig and sigu (newsig, sigu only
// signals without readers or writers), link and linka (linkps), net and
// neta (newsig and linksp), netl (net with its pins), netla (net with
// arrows), param (setp of RW parameters, values 20 wide as show prints
// them), thread (addf, newest thread first), unconnectedinpins; all is
// comp, alias, sigu, netla, param and thread, allu adds
// unconnectedinpins before thread. Floats are printed with 7 digits, as
// LinuxCNC does: Save (save with no KIND) keeps every digit.
func (h *HAL) SaveKind(w io.Writer, kind string) error {
	const op = "save"
	if !slices.Contains(SaveKinds, kind) {
		return errf(op, "", "", rtapi.ErrInvalid, "Unknown 'save' type '%s'", kind)
	}
	h.mu.Lock()
	if err := h.checkOpen(op, "", ""); err != nil {
		h.mu.Unlock()
		return err
	}
	s := sortedSnapshot(h.hostSnapshotLocked())
	comps := h.saveCompLinesLocked()
	aliases := h.aliasRowsLocked(nil, true, true)
	var threads [][2]string // function, thread
	for i := len(h.threads) - 1; i >= 0; i-- {
		th := h.threads[i]
		for _, f := range th.chain.Load().functs {
			threads = append(threads, [2]string{f.name, th.name})
		}
	}
	h.mu.Unlock()

	esc := names.Escape
	var b strings.Builder
	saveComps := func() {
		b.WriteString("# components\n")
		for _, l := range comps {
			b.WriteString(l)
		}
	}
	saveAliases := func() {
		for _, kind := range []string{"pin", "param"} {
			fmt.Fprintf(&b, "# %s aliases\n", kind)
			for _, a := range aliases {
				if a.kind == kind {
					fmt.Fprintf(&b, "alias %s %s %s\n", kind, esc(a.name), esc(a.alias))
				}
			}
		}
	}
	saveSignals := func(onlyUnlinked bool) {
		b.WriteString("# signals\n")
		for _, sig := range s.Signals {
			r, wr, _ := sigCounts(sig)
			if !(onlyUnlinked && (wr > 0 || r > 0)) {
				fmt.Fprintf(&b, "newsig %s %s\n", esc(sig.Name), dataType5(sig.Type))
			}
		}
	}
	saveLinks := func(arrows bool) {
		b.WriteString("# links\n")
		for _, p := range s.Pins {
			if p.Signal != "" {
				arrow := ""
				if arrows {
					arrow = pinArrow(p.Dir)
				}
				fmt.Fprintf(&b, "linkps %s %s %s\n", esc(p.Name), arrow, esc(p.Signal))
			}
		}
	}
	saveNets := func(mode int) {
		b.WriteString("# nets\n")
		for _, sig := range s.Signals {
			switch mode {
			case 0, 1:
				fmt.Fprintf(&b, "newsig %s %s\n", esc(sig.Name), dataType5(sig.Type))
				for i, p := range sig.Pins {
					arrow := ""
					if mode == 1 {
						arrow = sigArrow(sig.Dirs[i])
					}
					fmt.Fprintf(&b, "linksp %s %s %s\n", esc(sig.Name), arrow, esc(p))
				}
			case 2:
				if len(sig.Pins) == 0 {
					continue
				}
				fmt.Fprintf(&b, "net %s", esc(sig.Name))
				for _, p := range sig.Pins {
					fmt.Fprintf(&b, " %s", esc(p))
				}
				b.WriteByte('\n')
			case 3:
				if len(sig.Pins) == 0 {
					continue
				}
				writeNetArrows(&b, sig)
			}
		}
	}
	saveParams := func() {
		b.WriteString("# parameter values\n")
		for _, p := range s.Params {
			if p.Dir != RO {
				fmt.Fprintf(&b, "setp %s %s\n", esc(p.Name), showValue(p.Type, p.Value))
			}
		}
	}
	saveUnconnected := func() {
		b.WriteString("# unconnected pin values\n")
		for _, p := range s.Pins {
			if p.Signal == "" && (p.Dir == In || p.Dir == IO) {
				fmt.Fprintf(&b, "setp %s %s\n", esc(p.Name), showValue(p.Type, p.Value))
			}
		}
	}
	saveThreads := func() {
		b.WriteString("# realtime thread/function links\n")
		for _, t := range threads {
			fmt.Fprintf(&b, "addf %s %s\n", esc(t[0]), esc(t[1]))
		}
	}
	switch kind {
	case "all", "allu":
		saveComps()
		saveAliases()
		saveSignals(true)
		saveNets(3)
		saveParams()
		if kind == "allu" {
			saveUnconnected()
		}
		saveThreads()
	case "comp":
		saveComps()
	case "alias":
		saveAliases()
	case "sig", "signal":
		saveSignals(false)
	case "sigu":
		saveSignals(true)
	case "link", "linka":
		saveLinks(kind == "linka")
	case "net", "neta":
		saveNets(map[string]int{"net": 0, "neta": 1}[kind])
	case "netl":
		saveNets(2)
	case "netla", "netal":
		saveNets(3)
	case "param", "parameter":
		saveParams()
	case "thread":
		saveThreads()
	case "unconnectedinpins":
		saveUnconnected()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sigCounts counts a signal's reader (In), writer (Out) and
// bidirectional (IO) pins, as hal_sig_t's readers, writers, bidirs.
func sigCounts(sig SignalInfo) (readers, writers, bidirs int) {
	for _, d := range sig.Dirs {
		switch d {
		case In:
			readers++
		case Out:
			writers++
		default:
			bidirs++
		}
	}
	return readers, writers, bidirs
}

// writeNetArrows is save_nets_3: "net SIG OUT => IN ..." with its I/O
// pins after the writer, "<=>" between them, then "=>" before the
// first reader.
func writeNetArrows(b *strings.Builder, sig SignalInfo) {
	fmt.Fprintf(b, "net %s", names.Escape(sig.Name))
	state, first := false, true
	for i, p := range sig.Pins {
		if sig.Dirs[i] == Out {
			fmt.Fprintf(b, " %s", names.Escape(p))
			state = true
		}
	}
	for i, p := range sig.Pins {
		if sig.Dirs[i] != IO {
			continue
		}
		b.WriteByte(' ')
		if state {
			b.WriteString("=> ")
			state = false
		} else if !first {
			b.WriteString("<=> ")
		}
		b.WriteString(names.Escape(p))
		first = false
	}
	if !first {
		state = true
	}
	for i, p := range sig.Pins {
		if sig.Dirs[i] != In {
			continue
		}
		b.WriteByte(' ')
		if state {
			b.WriteString("=> ")
			state = false
		}
		b.WriteString(names.Escape(p))
	}
	b.WriteByte('\n')
}

// dataType5 is halcmd's data_type: a type name padded to 5 columns.
func dataType5(t Type) string { return fmt.Sprintf("%-5s", t) }

// saveCompLinesLocked is save_comps's lines: for each real-time
// component, oldest first, "loadrt NAME ARGS" with the arguments its
// loadrt was given (joined by blanks, so a load with none ends in a
// blank), or "#loadrt NAME  (not loaded by loadrt, no args saved)".
// User components and the HAL's own pseudo components are left out. A
// loadrt that made no component of its name (gortapi's threads) comes
// first, so that the file loads back. Called with h.mu.
func (h *HAL) saveCompLinesLocked() []string {
	comps := slices.DeleteFunc(slices.Clone(h.comps), func(c *Component) bool {
		return c == nil || c.removed || c.user || h.ownComps[c]
	})
	slices.SortStableFunc(comps, func(a, b *Component) int { return a.id - b.id })
	used := make([]bool, len(h.loaded))
	named := func(name string) int {
		for i, l := range h.loaded {
			if !used[i] && l[0] == name {
				return i
			}
		}
		return -1
	}
	var lines, head []string
	for _, c := range comps {
		if i := named(c.name); i >= 0 {
			used[i] = true
			lines = append(lines, "loadrt "+c.name+" "+strings.Join(h.loaded[i][1:], " ")+"\n")
			continue
		}
		lines = append(lines, "#loadrt "+names.Escape(c.name)+"  (not loaded by loadrt, no args saved)\n")
	}
	for i, l := range h.loaded {
		if !used[i] {
			head = append(head, "loadrt "+l[0]+" "+strings.Join(l[1:], " ")+"\n")
		}
	}
	return append(head, lines...)
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
	switch word {
	case "signed":
		return TypeS32, patterns
	case "unsigned":
		return TypeU32, patterns
	case "port", "":
		return 0, patterns
	}
	for n, t := range map[string]Type{"bool": TypeBit, "real": TypeFloat, "sint": TypeS64, "uint": TypeU64} {
		if word == n {
			return t, patterns
		}
	}
	for t := TypeBit; t <= TypeU64; t++ {
		if word == t.String() {
			return t, patterns
		}
	}
	return 0, patterns
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
