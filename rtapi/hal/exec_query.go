package hal

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unsafe"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

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
	return writeOut(w, &b)
}

// ptype prints the type of a pin or parameter (do_ptype_cmd).
func (h *HAL) ptype(w io.Writer, name string) error {
	if err := h.lockOpen("ptype"); err != nil {
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
	if err := h.lockOpen("stype"); err != nil {
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
	if err := h.lockOpen(op); err != nil {
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
	return writeOut(w, &b)
}

// writeLockStatus is print_lock_status.
func writeLockStatus(b *strings.Builder, lock uint8) {
	fmt.Fprintf(b, "HAL locking status:\n  current lock value %d (%02x)\n", lock, lock)
	if lock == 0 {
		b.WriteString("  HAL_LOCK_NONE - nothing is locked\n")
	}
	for i, line := range [...]string{ // lockLoad, lockConfig, lockParams, lockRun
		"  HAL_LOCK_LOAD    - loading of new components is locked\n",
		"  HAL_LOCK_CONFIG  - link and addf is locked\n",
		"  HAL_LOCK_PARAMS  - setting params is locked\n",
		"  HAL_LOCK_RUN     - running/stopping HAL is locked\n"} {
		if lock&(1<<i) != 0 {
			b.WriteString(line)
		}
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
	count := func(live bool, into *[2]int) {
		if live {
			into[0]++
		} else {
			into[1]++
		}
	}
	for _, c := range h.comps {
		count(c != nil && !c.removed, &m.comps)
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
	m.aliases[0] = len(h.aliasRowsLocked(nil, "pin", "param"))
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
