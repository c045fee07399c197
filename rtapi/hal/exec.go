package hal

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

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
		return h.show(w, what, a[min(1, len(a)):], o.Script)
	case "save":
		return h.saveTo(w, arg(a, 0), arg(a, 1))
	case "list":
		return h.list(w, a[0], a[1:])
	case "ptype":
		return h.ptype(w, a[0])
	case "stype":
		return h.stype(w, a[0])
	case "status":
		return h.status(w, arg(a, 0))
	case "help":
		_, err := io.WriteString(w, halfile.Help(arg(a, 0)))
		return err
	case "echo", "unecho":
		_, err := io.WriteString(w, map[string]string{"echo": "Echo on\n", "unecho": "Echo off\n"}[c.Verb])
		return err
	case "alias":
		return h.alias(a[0], a[1], a[2])
	case "unalias":
		return h.unalias(a[0], a[1])
	case "lock", "unlock":
		return h.setLock(c.Verb, arg(a, 0))
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

// arg is a verb's optional argument i, "" when absent.
func arg(a []string, i int) string {
	if i < len(a) {
		return a[i]
	}
	return ""
}

// writeOut writes what a verb printed into b to w.
func writeOut(w io.Writer, b *strings.Builder) error {
	_, err := io.WriteString(w, b.String())
	return err
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
	switch msg, config := configRefusals[verb]; {
	case verb == "loadrt" && lock&lockLoad != 0:
		return "HAL is locked, loading of modules is not permitted"
	case (verb == "start" || verb == "stop") && lock&lockRun != 0:
		return verb + "_threads called while HAL is locked"
	case !config || lock&lockConfig == 0:
		return ""
	case verb == "net" && !sigExists:
		return "signal_new called while HAL is locked"
	default:
		return msg
	}
}

// configRefusals are hal_lib's messages refusing a verb under lockConfig
// (safep's is gortapi's own).
var configRefusals = map[string]string{
	"net": "link called while HAL locked", "linkps": "link called while HAL locked",
	"unlinkp": "unlink called while HAL locked", "newsig": "signal_new called while HAL is locked",
	"delsig": "signal_delete called while HAL locked", "addf": "add_funct_to_thread called while HAL is locked",
	"delf": "del_funct_from_thread called while HAL is locked", "safep": "safep called while HAL is locked",
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
	if err := h.lockOpen(verb); err != nil {
		return err
	}
	defer h.mu.Unlock()
	l, ok := lockLevel(verb, word, h.lock)
	if !ok {
		return errf(verb, "", "", rtapi.ErrInvalid, "level %q is none of all, tune, none", word)
	}
	h.lock = l
	return nil
}
