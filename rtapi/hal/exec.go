package hal

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Exec runs one parsed command on the HAL, as halcmd would, writing what
// it prints (getp, gets, show, save) to w. Errors carry the command's
// FILE:LINE (a *halfile.Error) and match rtapi's sentinels. Set-up code.
func (h *HAL) Exec(w io.Writer, c halfile.Command) error {
	return c.At(h.exec(w, c))
}

func (h *HAL) exec(w io.Writer, c halfile.Command) error {
	a := c.Args
	switch c.Verb {
	case "loadrt":
		return h.LoadRT(a[0], a[1:]...)
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
		what, pattern := "all", ""
		if len(a) > 0 {
			what = a[0]
		}
		if len(a) > 1 {
			pattern = a[1]
		}
		return h.Show(w, what, pattern)
	case "save":
		return h.Save(w)
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
// started nothing. The error names FILE:LINE; the HAL is then left as the
// failing command left it, to be closed (halrun does).
func (h *HAL) Load(w io.Writer, cmds []halfile.Command) error {
	var run *halfile.Command
	for i, c := range cmds {
		if c.Verb == "start" || c.Verb == "stop" {
			run = &cmds[i]
			continue
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
	switch what {
	case "comp", "pin", "param", "sig", "signal", "parameter":
		s, err := h.hostSnapshot("show")
		if err != nil {
			return err
		}
		return WriteShow(w, what, pattern, s)
	case "funct", "function":
		return h.showFuncts(w, pattern)
	case "thread":
		return h.showThreads(w, pattern)
	case "all":
		s, err := h.hostSnapshot("show")
		if err != nil {
			return err
		}
		for _, k := range []string{"comp", "pin", "sig", "param"} {
			if err := WriteShow(w, k, pattern, s); err != nil {
				return err
			}
		}
		if err := h.showFuncts(w, pattern); err != nil {
			return err
		}
		fmt.Fprintln(w)
		return h.showThreads(w, pattern)
	}
	return fmt.Errorf("show: unknown item %q (comp, pin, param, sig, funct, thread, all): %w", what, rtapi.ErrInvalid)
}

// hostSnapshot is the host's own view of its data tables, for Show and
// Save: names, owners, types, directions and links from the host's
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
		info := PinInfo{Owner: p.comp.name, OwnerID: p.comp.id, Name: p.name, Type: p.typ, Dir: p.dir}
		if i, ok := sigAt[p.sig]; ok && p.sig != nil {
			info.Signal = p.sig.name
			sig := &s.Signals[i]
			sig.Pins = append(sig.Pins, p.name)
			sig.Dirs = append(sig.Dirs, p.dir)
			if p.dir == Out {
				sig.Writer = p.name
			}
		}
		s.Pins = append(s.Pins, info)
	}
	for _, p := range pars {
		s.Params = append(s.Params, ParamInfo{Owner: p.comp.name, OwnerID: p.comp.id, Name: p.name, Type: p.typ, Dir: p.dir})
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
	s = sortedSnapshot(s)
	esc := names.Escape
	var b strings.Builder
	switch what {
	case "comp":
		fmt.Fprintf(&b, "Loaded HAL Components:\nID      Type  %-*s PID   State\n", halNameLen, "Name")
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
		b.WriteString("Component Pins:\nOwner   Type  Dir                 Value  Name\n")
		for _, p := range s.Pins {
			if !match(pattern, p.Name) {
				continue
			}
			fmt.Fprintf(&b, " %5d  %-5s %-3s  %s  %s", p.OwnerID, p.Type, p.Dir, showValue(p.Type, p.Value), esc(p.Name))
			if p.Signal != "" {
				fmt.Fprintf(&b, " %s %s", pinArrow(p.Dir), esc(p.Signal))
			}
			b.WriteByte('\n')
		}
	case "param", "parameter":
		b.WriteString("Parameters:\nOwner   Type  Dir                 Value  Name\n")
		for _, p := range s.Params {
			if match(pattern, p.Name) {
				fmt.Fprintf(&b, " %5d  %-5s %-3s  %s  %s\n", p.OwnerID, p.Type, p.Dir, showValue(p.Type, p.Value), esc(p.Name))
			}
		}
	case "sig", "signal":
		b.WriteString("Signals:\nType                  Value  Name     (linked to)\n")
		for _, sig := range s.Signals {
			if !match(pattern, sig.Name) {
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

func (h *HAL) showFuncts(w io.Writer, pattern string) error {
	var b strings.Builder
	b.WriteString("Exported Functions:\nThread      Calls       Time       Tmax  Name\n")
	for _, f := range h.Functs() {
		if !match(pattern, f.name) {
			continue
		}
		h.mu.Lock()
		th := ""
		if f.thread != nil {
			th = f.thread.name
		}
		h.mu.Unlock()
		s := f.Stats()
		fmt.Fprintf(&b, "%-10s %6d  %9s  %9s  %s\n", names.Escape(th), s.Calls, short(s.Time), short(s.TMax), names.Escape(f.name))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (h *HAL) showThreads(w io.Writer, pattern string) error {
	var ts []ThreadStats
	for _, s := range h.Stats() {
		if match(pattern, s.Name) {
			ts = append(ts, s)
		}
	}
	if _, err := io.WriteString(w, "Realtime Threads:\n"); err != nil {
		return err
	}
	return WriteThreads(w, ts)
}

// Save prints a .hal file that rebuilds the HAL's wiring (halcmd save):
// loadrt lines, signals and links, values of RW parameters, unlinked
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
