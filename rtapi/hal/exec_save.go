package hal

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Save prints a .hal file that rebuilds the HAL's wiring (halcmd save
// with no KIND): loadrt lines, aliases, signals and links, values of RW parameters, unlinked
// input pins and undriven signals, each thread's functions and safep
// lines (a Go safe state as a comment), and start if the threads run.
// Names and links come from the host's memory, values from the data
// tables (hostSnapshot); every line parses back (halfile) to the command
// it was printed from.
func (h *HAL) Save(w io.Writer) error {
	if err := h.lockOpen("save"); err != nil {
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
	for _, al := range h.aliasRowsLocked(nil, "pin", "param") {
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
	return writeOut(w, &b)
}

// exact prints a value for Save, floats with every digit.
func exact(t Type, w uint64) string {
	if t == TypeFloat {
		return strconv.FormatFloat(math.Float64frombits(w), 'g', -1, 64)
	}
	return FormatValue(t, w)
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
	if err := h.lockOpen(op); err != nil {
		return err
	}
	s := sortedSnapshot(h.hostSnapshotLocked())
	comps := h.saveCompLinesLocked()
	aliases := h.aliasRowsLocked(nil, "pin", "param")
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
	saveNets := func(mode int) { // 0 net, 1 neta, 2 netl, 3 netla
		b.WriteString("# nets\n")
		for _, sig := range s.Signals {
			switch {
			case mode < 2:
				fmt.Fprintf(&b, "newsig %s %s\n", esc(sig.Name), dataType5(sig.Type))
				for i, p := range sig.Pins {
					arrow := ""
					if mode == 1 {
						arrow = sigArrow(sig.Dirs[i])
					}
					fmt.Fprintf(&b, "linksp %s %s %s\n", esc(sig.Name), arrow, esc(p))
				}
			case len(sig.Pins) == 0:
			case mode == 2:
				fmt.Fprintf(&b, "net %s", esc(sig.Name))
				for _, p := range sig.Pins {
					fmt.Fprintf(&b, " %s", esc(p))
				}
				b.WriteByte('\n')
			default:
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
	case "sig", "signal", "sigu":
		saveSignals(kind == "sigu")
	case "link", "linka":
		saveLinks(kind == "linka")
	case "net", "neta", "netl", "netla", "netal":
		saveNets(map[string]int{"neta": 1, "netl": 2, "netla": 3, "netal": 3}[kind])
	case "param", "parameter":
		saveParams()
	case "thread":
		saveThreads()
	case "unconnectedinpins":
		saveUnconnected()
	}
	return writeOut(w, &b)
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
