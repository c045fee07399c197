package usercomp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/internal/spawn"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Loader runs the user-space verbs of a .hal file, as LinuxCNC's halcmd
// does (halcmd_commands.cc):
//
//	loadusr [-W | -Wn NAME | -w] [-i] PROGRAM ARGS...
//	waitusr NAME
//	unloadusr NAME | all
//
// loadusr starts PROGRAM, found on $PATH, with ARGS, this process's
// standard output and error (Stdout, Stderr) and its environment plus
// Env, as an ordinary process (SCHED_OTHER: the SCHED_FIFO 1 of rtapi's
// runtime guard is the host's threads' only). -W waits until the
// component named after the program (its base name up to the last dot:
// "halpanel" for "./halpanel.py") is ready,
// -Wn NAME (-W -n NAME) until NAME is; a program that exits first is an
// error. -w waits until the program exits: a non-zero status is an error
// unless -i, a signal always. waitusr waits until user component NAME is
// gone (one that does not exist is no error). unloadusr sends SIGTERM to
// the process of user component NAME, or of every user component but
// this process's own, and does not wait.
//
// The zero Loader needs Comps. A Loader is safe for concurrent use.
type Loader struct {
	// Comps lists the host's components (hal.View's Snapshot.Comps).
	Comps func() ([]hal.CompInfo, error)
	// Env is added to each program's environment (Env of the host).
	Env []string
	// Stdout and Stderr are the programs' and the -W pacifier's; nil:
	// this process's.
	Stdout, Stderr io.Writer
	// DieWithParent has each program sent SIGTERM when this process
	// ends, however it ends (a host: its programs have nothing to join);
	// Linux only.
	DieWithParent bool

	mu   sync.Mutex
	kids []*child
}

type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when Wait returned; err then set
	err  error
}

// Poll periods, LinuxCNC's: -W checks every 10 ms, waitusr every 200 ms.
const (
	readyPoll   = 10 * time.Millisecond
	waitusrPoll = 200 * time.Millisecond
)

// IsUserVerb reports whether verb is one Loader.Exec runs whole; it
// runs unload's user-space part too (Exec).
func IsUserVerb(verb string) bool {
	return verb == "loadusr" || verb == "waitusr" || verb == "unloadusr"
}

// LoadusrArgs is a parsed loadusr command line.
type LoadusrArgs struct {
	WaitReady  bool   // -W
	Name       string // the component -W waits for: -n's, else guessed
	WaitExit   bool   // -w
	IgnoreExit bool   // -i: -w takes any exit status
	Program    string
	Args       []string
}

// ParseLoadusr reads loadusr's words as LinuxCNC's getopt("+wWin:"):
// options up to the first word that is none (or "--"), clustered
// ("-Wn NAME", "-wi"), -n's value attached or the next word. Without -n
// the name is the program's base name up to its last dot.
func ParseLoadusr(args []string) (LoadusrArgs, error) {
	var a LoadusrArgs
	i := 0
	for ; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			i++
			break
		}
		if len(w) < 2 || w[0] != '-' {
			break
		}
		for j := 1; j < len(w); j++ {
			switch w[j] {
			case 'w':
				a.WaitExit = true
			case 'W':
				a.WaitReady = true
			case 'i':
				a.IgnoreExit = true
			case 'n':
				a.Name = w[j+1:]
				if a.Name == "" {
					if i+1 >= len(args) {
						return LoadusrArgs{}, fmt.Errorf("loadusr: option -n needs a component name: %w", errs.Invalid)
					}
					i++
					a.Name = args[i]
				}
				j = len(w)
			default:
				return LoadusrArgs{}, fmt.Errorf("loadusr: unknown option -%c (want -W, -Wn NAME, -w, -i): %w", w[j], errs.Invalid)
			}
		}
	}
	if i >= len(args) || args[i] == "" {
		return LoadusrArgs{}, fmt.Errorf("loadusr: no program: %w", errs.Invalid)
	}
	a.Program, a.Args = args[i], args[i+1:]
	if a.Name == "" {
		a.Name = guessName(a.Program)
	}
	return a, nil
}

// guessName is halcmd's guess_comp_name: the base name up to its last dot.
func guessName(prog string) string {
	base := filepath.Base(prog)
	if k := strings.LastIndexByte(base, '.'); k >= 0 {
		base = base[:k]
	}
	return base
}

// Exec runs c if it is loadusr, waitusr or unloadusr, and reports
// whether it was one. Of unload NAME|all (LinuxCNC's do_unload_cmd) it
// runs the user-space part: unloadusr all, then false, so that the
// caller passes unload all on to the host (hal.HAL.Exec: unloadrt all);
// unloadusr NAME for a user component, true; false for any other NAME,
// for the host to unload or report. It blocks as the verb does (-W, -w, waitusr) until
// it is done or ctx ends. Errors match rtapi.ErrInvalid; they do not
// carry c's position.
func (l *Loader) Exec(ctx context.Context, c halfile.Command) (bool, error) {
	switch c.Verb {
	case "loadusr":
		a, err := ParseLoadusr(c.Args)
		if err != nil {
			return true, err
		}
		return true, l.loadusr(ctx, a)
	case "waitusr":
		return true, l.waitusr(ctx, c.Args[0])
	case "unloadusr":
		return true, l.unloadusr(c.Args[0])
	case "unload":
		return l.unload(c.Args[0])
	}
	return false, nil
}

// unload is unload's user-space part (Exec).
func (l *Loader) unload(name string) (bool, error) {
	if name == "all" {
		return false, l.unloadusr("all")
	}
	comps, err := l.Comps()
	if err != nil {
		return true, fmt.Errorf("unload %s: %w", name, err)
	}
	if i := slices.IndexFunc(comps, func(c hal.CompInfo) bool { return c.Name == name }); i >= 0 && comps[i].User {
		return true, l.unloadusr(name)
	}
	return false, nil
}

func (l *Loader) out(w io.Writer, def *os.File) io.Writer {
	if w == nil {
		return def
	}
	return w
}

func (l *Loader) loadusr(ctx context.Context, a LoadusrArgs) error {
	cmd := exec.Command(a.Program, a.Args...)
	cmd.Env = append(os.Environ(), l.Env...)
	cmd.Stdout, cmd.Stderr = l.out(l.Stdout, os.Stdout), l.out(l.Stderr, os.Stderr)
	start := cmd.Start
	if l.DieWithParent {
		start = func() error { return spawn.Start(cmd, syscall.SIGTERM) }
	}
	if err := start(); err != nil {
		return fmt.Errorf("loadusr: %w (%w)", err, errs.Invalid)
	}
	k := &child{cmd: cmd, done: make(chan struct{})}
	l.mu.Lock()
	l.kids = append(l.kids, k)
	l.mu.Unlock()
	go func() {
		k.err = cmd.Wait()
		close(k.done)
		l.mu.Lock()
		l.kids = slices.DeleteFunc(l.kids, func(o *child) bool { return o == k })
		l.mu.Unlock()
	}()
	if a.WaitReady {
		if err := l.waitReady(ctx, a, k); err != nil {
			return err
		}
	}
	if !a.WaitExit {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-k.done:
	}
	return exitError(a, k.err)
}

// exitError judges the status of a program loadusr -w waited for.
func exitError(a LoadusrArgs, err error) error {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &ee):
		return fmt.Errorf("loadusr: waiting for %s: %w", a.Program, err)
	case !ee.Exited():
		return fmt.Errorf("loadusr: program '%s' did not exit normally (%v): %w", a.Program, ee, errs.Invalid)
	case a.IgnoreExit:
		return nil
	}
	return fmt.Errorf("loadusr: program '%s' failed, returned %d: %w", a.Program, ee.ExitCode(), errs.Invalid)
}

// waitReady polls, as halcmd does every 10 ms, until component a.Name is
// ready or the program has exited; after 2 s it tells Stderr what it
// waits for.
func (l *Loader) waitReady(ctx context.Context, a LoadusrArgs, k *child) error {
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	stderr := l.out(l.Stderr, os.Stderr)
	count := 0
	defer func() {
		if count >= 200 {
			fmt.Fprintln(stderr)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		exited := false
		select {
		case <-k.done:
			exited = true
			var ee *exec.ExitError
			if errors.As(k.err, &ee) && ee.Exited() && ee.ExitCode() != 0 {
				return fmt.Errorf("loadusr: %s exited with status %d without making %s ready: %w", a.Program, ee.ExitCode(), a.Name, errs.Invalid)
			}
		default:
		}
		comps, err := l.Comps()
		if err != nil {
			return fmt.Errorf("loadusr -W %s: %w", a.Name, err)
		}
		if i := slices.IndexFunc(comps, func(c hal.CompInfo) bool { return c.Name == a.Name }); i >= 0 && comps[i].Ready {
			return nil
		}
		if exited {
			return fmt.Errorf("loadusr: %s exited without becoming ready: %w", a.Program, errs.Invalid)
		}
		count++
		if count == 200 {
			fmt.Fprintf(stderr, "Waiting for component '%s' to become ready.", a.Name)
		} else if count > 200 && count%10 == 0 {
			fmt.Fprint(stderr, ".")
		}
	}
}

// waitusr waits, polling every 200 ms, until user component name is gone.
func (l *Loader) waitusr(ctx context.Context, name string) error {
	tick := time.NewTicker(waitusrPoll)
	defer tick.Stop()
	for first := true; ; first = false {
		comps, err := l.Comps()
		if err != nil {
			return fmt.Errorf("waitusr %s: %w", name, err)
		}
		i := slices.IndexFunc(comps, func(c hal.CompInfo) bool { return c.Name == name })
		switch {
		case i < 0:
			return nil // not found, or already exited: no error, as LinuxCNC
		case first && !comps[i].User:
			return fmt.Errorf("waitusr: '%s' is not a userspace component: %w", name, errs.Invalid)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// unloadusr sends SIGTERM to the process of user component name, or of
// each one for "all", never to this process; it does not wait.
func (l *Loader) unloadusr(name string) error {
	comps, err := l.Comps()
	if err != nil {
		return fmt.Errorf("unloadusr %s: %w", name, err)
	}
	for _, c := range comps {
		if (name == "all" || c.Name == name) && c.User && c.PID > 1 && c.PID != os.Getpid() {
			if p, err := os.FindProcess(c.PID); err == nil {
				_ = p.Signal(syscall.SIGTERM) // gone already: nothing to end
			}
		}
	}
	return nil
}

// Close ends what the loader started, as halrun's "unload all" at its
// end: SIGTERM to every user component (unloadusr all) and to each
// program still running, then waits for the programs, up to grace, and
// sends SIGKILL to those left. It returns when they have all exited.
func (l *Loader) Close(grace time.Duration) error {
	err := l.unloadusr("all")
	l.mu.Lock()
	kids := slices.Clone(l.kids)
	l.mu.Unlock()
	for _, k := range kids {
		_ = k.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	for _, k := range kids {
		select {
		case <-k.done:
			continue
		case <-deadline.C:
		}
		for _, k := range kids {
			_ = k.cmd.Process.Kill()
		}
		for _, k := range kids {
			<-k.done
		}
		break
	}
	return err
}
