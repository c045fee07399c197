// Command halrun loads a LinuxCNC .hal file and runs it until Ctrl-C:
//
//	halrun [-rtapi flags] [-shm-dir DIR] [-fault-after DURATION] [-i INI] servo.hal
//	halrun [flags] [-i INI] [-I] -f servo.hal   run the file, then exit
//	halrun [flags] [-i INI] [-I]               commands from standard input
//	halrun [flags] -U                          remove what a dead host left
//
// The file's lines get LinuxCNC's substitutions: [SECTION]KEY from the
// INI file -i names (or $INI_FILE_NAME names), $VAR from the
// environment; source FILE reads FILE relative to the naming file.
// -f FILE runs the file and exits at its end, stopping the threads and
// removing everything, with status 0 when every command succeeded, as
// LinuxCNC's halrun -f. -I then reads commands from standard input, one
// a line, until its end or quit, going past a failing one; the exit
// status stays the file's. On a terminal that is halcmd's prompt
// ("halcmd: ", line editing, history, TAB completion of the HAL's names;
// package examples/internal/halprompt). With no file at all halrun reads
// standard input so. -U removes the segments and socket of this instance that a
// host left when it died (kill -9), and refuses while a host lives.
//
// loadusr [-W|-Wn NAME|-w] PROGRAM ARGS starts PROGRAM (found on
// $PATH) with halrun's standard output and error, and RTAPI_INSTANCE and
// GORTAPI_HAL_SOCKET in its environment, so that a user-space component
// (package rtapi/hal/usercomp; examples/halpanel) joins this host with no
// flags; -W waits until its component is ready, -w until it exits.
// waitusr and unloadusr are LinuxCNC's (usercomp.Loader). A start or stop
// before a loadusr takes effect before it runs. When halrun ends, the
// programs get SIGTERM (and SIGKILL 5 s later), as do they when halrun
// dies; -f ends after every loadusr -w has returned.
//
// It parses the whole file first; a bad file is reported as FILE:LINE
// and nothing is created. It then makes the HAL on the flavor rtapi
// picks, with its components, pins and signals in a shared data segment
// and its thread statistics in a stats segment, runs the file (start
// takes effect after every other line succeeded) and listens for
// examples/halcmd on gortapi-<instance>-hal.sock in -shm-dir, or by default
// in /run/gortapi (root) or $XDG_RUNTIME_DIR/gortapi (halctl.SocketPath),
// a directory no other user may write. Ctrl-C (or
// SIGTERM) stops the threads, removes the segments and the socket, and
// exits 0. Components come from rtapi/hal/comps.
//
// -fault-after 3s injects a fault into every thread 3 s after the file
// was run: a function at the head of each chain panics, the thread fails
// and its safe states run (the file's "safep THREAD PIN VALUE" lines), so
// that examples/halcmd or halmon shows the pins at their safe values.
// halrun keeps serving until Ctrl-C; the injected faults are not an
// error of its exit. examples/halhost gets the same flag once its
// rewrite is merged.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/examples/internal/halprompt"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps"
	"github.com/gortapi/gortapi/rtapi/hal/halctl"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/inifile"
	"github.com/gortapi/gortapi/rtapi/hal/usercomp"
	"github.com/gortapi/gortapi/rtapi/shm"
)

type config struct {
	file string
	// ini: the INI file of [SECTION]KEY; "": $INI_FILE_NAME, or none.
	ini string
	// exitAtEnd (-f): stop and unload after the file (and -I's input).
	exitAtEnd bool
	// interactive (-I, or no file): commands from stdin after the file.
	interactive bool
	// cleanup (-U): remove what a dead host of the instance left.
	cleanup  bool
	stdin    io.Reader
	stderr   io.Writer // interactive commands' errors
	shmDir   string
	dataKey  uint
	statsKey uint
	// faultAfter: inject a fault into every thread this long after the
	// file ran; 0: never.
	faultAfter time.Duration
	rt         rtapi.Options
}

func main() { os.Exit(command(os.Args[1:], os.Stdout, os.Stderr)) }

// command runs halrun with args until the file's end (-f), its input's
// end (-I) or Ctrl-C: its exit status (HACKING.md, "Examples: one
// command-line style"). Standard input is os.Stdin. The rtapi settings
// come from rtapi.RegisterFlags: the -rtapi.* flags, else the RTAPI_*
// environment, as for every rtapi program.
func command(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("halrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[flags] [-i INI] [-I] [-f] FILE.hal | halrun [flags] -U", "")
	opts := rtapi.RegisterFlags(fs)
	fs.StringVar(&c.shmDir, "shm-dir", "", "directory of the segments and the socket, which only this user or root may write (default: segments in /dev/shm, the socket in /run/gortapi for root, $XDG_RUNTIME_DIR/gortapi otherwise)")
	cli.KeyVar(fs, &c.dataKey, "data-key", halctl.DefaultDataKey, "shared-memory key of the pins, parameters and signals")
	cli.KeyVar(fs, &c.statsKey, "stats-key", halctl.DefaultStatsKey, "shared-memory key of the thread statistics")
	fs.DurationVar(&c.faultAfter, "fault-after", 0,
		"inject a fault into every thread after this time, so that the file's safe states (safep) run; 0: never")
	fs.StringVar(&c.ini, "i", "", "INI file of the [SECTION]KEY the .hal file names (default $INI_FILE_NAME)")
	var exitFile string
	fs.StringVar(&exitFile, "f", "", "run this .hal file and exit at its end, unloading everything")
	fs.BoolVar(&c.interactive, "I", false, "after the file, read commands from standard input until its end or quit")
	fs.BoolVar(&c.cleanup, "U", false, "remove the segments and socket that a dead host of this instance left, and exit")
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		err = cli.UsageError{Err: err}
	}
	if err == nil {
		c.rt = *opts
		c.stdin, c.stderr = os.Stdin, stderr
		if c.ini == "" {
			c.ini = os.Getenv("INI_FILE_NAME")
		}
		err = c.setFile(exitFile, fs.Args())
	}
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = run(ctx, stdout, c)
		stop()
	}
	return cli.Exit("halrun", stderr, err)
}

// setFile takes the file from -f or the one argument, as LinuxCNC's
// halrun: not both, not two. No file reads standard input.
func (c *config) setFile(exitFile string, args []string) error {
	switch {
	case len(args) > 1:
		return cli.Usagef("too many arguments %q", args)
	case len(args) == 1 && exitFile != "":
		return cli.Usagef("gave -f %s and also %s", exitFile, args[0])
	case exitFile != "":
		c.file, c.exitAtEnd = exitFile, true
	case len(args) == 1:
		c.file, c.exitAtEnd = args[0], c.interactive
	case !c.cleanup:
		c.interactive, c.exitAtEnd = true, true
	}
	if c.cleanup && (c.file != "" || c.interactive) {
		return cli.Usagef("-U takes no file and no -I")
	}
	return nil
}

// parseOptions gives the file's substitutions: the INI file's keys and
// the environment.
func parseOptions(ini string) (halfile.Options, error) {
	if ini == "" {
		return halfile.Options{Open: openHAL}, nil
	}
	f, err := inifile.Load(ini)
	if err != nil {
		return halfile.Options{}, err
	}
	return halfile.Options{INI: f.Find, Open: openHAL}, nil
}

// openHAL opens a .hal file with the lines that only tune LinuxCNC's
// kernel as comments, so that LinuxCNC's test.hal files run unchanged:
// setexact_for_test_suite_only (thread periods here are always exactly
// as given) and log rt|user LEVEL (rtapi's log level is a flag). Line
// numbers stay.
func openHAL(name string) (io.ReadCloser, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "setexact_for_test_suite_only" ||
			f[0] == "log" && len(f) == 3 && (f[1] == "rt" || f[1] == "user")) &&
			(i == 0 || !strings.HasSuffix(strings.TrimRight(lines[i-1], "\n"), "\\")) {
			lines[i] = "# " + l
		}
	}
	return io.NopCloser(strings.NewReader(strings.Join(lines, ""))), nil
}

func run(ctx context.Context, out io.Writer, c config) error {
	if c.faultAfter < 0 {
		return cli.Usagef("-fault-after must not be negative")
	}
	if c.dataKey == 0 || c.statsKey == 0 || c.dataKey > 0xffffffff || c.statsKey > 0xffffffff || c.dataKey == c.statsKey {
		return cli.Usagef("-data-key and -stats-key must be two different non-zero 32-bit keys")
	}
	if c.cleanup {
		return cleanup(out, c)
	}
	po, err := parseOptions(c.ini)
	if err != nil {
		return err // FILE:LINE of the INI file; nothing was created
	}
	var cmds []halfile.Command
	if c.file != "" {
		if cmds, err = po.ParseFile(c.file); err != nil {
			return err // FILE:LINE: ...; nothing was created
		}
	}
	rt, err := rtapi.Open(c.rt)
	if err != nil {
		return err
	}
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{DataKey: uint32(c.dataKey), StatsKey: uint32(c.statsKey), ShmDir: c.shmDir})
	if err != nil {
		return err
	}
	// The socket serves from the start: loadusr's programs join through it.
	sock := halctl.SocketPath(c.shmDir, rt.Instance())
	srv, err := halctl.Serve(h, sock, halctl.Options{})
	if err != nil {
		return errors.Join(err, h.Close())
	}
	view, viewMu := h.View(), new(sync.Mutex) // a View is for one goroutine at a time
	ld := &usercomp.Loader{
		Comps: func() ([]hal.CompInfo, error) {
			viewMu.Lock()
			defer viewMu.Unlock()
			s, err := view.Read()
			return s.Comps, err
		},
		Env:           usercomp.Env(sock, rt.Instance()),
		Stdout:        out,
		DieWithParent: true,
	}
	// shutdown ends the programs, then the socket, then the HAL.
	shutdown := func() error {
		return errors.Join(ld.Close(programGrace), srv.Close(), withoutInjected(h.Close()))
	}
	if err := load(ctx, out, h, ld, cmds); err != nil {
		return errors.Join(err, shutdown())
	}
	if c.exitAtEnd && !c.interactive {
		return shutdown()
	}
	faulted, err := injectFaults(h, c.faultAfter)
	if err != nil {
		return errors.Join(err, shutdown())
	}
	if c.file == "" {
		c.file = "(no file)"
	}
	state := "stopped (the file has no start)"
	if h.Running() {
		state = "running"
	}
	ends := "Ctrl-C ends"
	if c.interactive {
		ends = "reading commands from standard input; its end or quit ends"
	}
	fmt.Fprintf(out, "halrun: %s loaded on flavor %s, threads %s; halcmd -rtapi.instance %d talks to it; %s\n",
		c.file, rt.Flavor().Name, state, rt.Instance(), ends)
	exec := func(c halfile.Command) error {
		if user, err := ld.Exec(ctx, c); user {
			return c.At(err)
		}
		return h.Exec(out, c)
	}
	names := func(c halfile.Command) (string, error) {
		var b strings.Builder
		err := h.Exec(&b, c)
		return b.String(), err
	}
	done := interact(ctx, c.stdin, out, c.stderr, exec, names, po, c.interactive)
	select {
	case <-ctx.Done():
	case <-done:
	case names := <-faulted:
		fmt.Fprintf(out, "halrun: injected a fault after %v: threads %s failed, their safe states ran\n",
			c.faultAfter, strings.Join(names, ", "))
		select {
		case <-ctx.Done():
		case <-done:
		}
	}
	if done != nil {
		<-done // a command under way ends before the HAL closes
	}
	err = shutdown()
	fmt.Fprintln(out, "halrun: stopped, segments removed")
	return err
}

// interact runs commands read from in, one a line (a trailing backslash
// continues it), as halcmd -kf: [SECTION]KEY and $VAR substituted, each
// run at once, a failing one reported to errs and gone past. On a
// terminal it is halcmd's prompt (halprompt.NewTTY: "halcmd: ", line
// editing, history, TAB completion of the HAL's names from names); a
// line is read only once the one before has run. quit or exit, the end
// of in (Ctrl-D, or Ctrl-C at the prompt), or ctx's end closes the
// channel, after the command under way. Not on: a nil channel.
func interact(ctx context.Context, in io.Reader, out, errs io.Writer, exec func(halfile.Command) error, names halprompt.Query, po halfile.Options, on bool) <-chan struct{} {
	if !on {
		return nil
	}
	var rd halprompt.LineReader
	if f, ok := in.(*os.File); ok && cli.IsTerminal(f) {
		rd = halprompt.NewTTY(f, out, func() (halprompt.Names, error) { return halprompt.ReadNames(names) })
	} else {
		rd = halprompt.Plain(in, "", out)
	}
	lines := make(chan string)
	next, stop := make(chan struct{}), make(chan struct{})
	go func() { // blocks in a read of in until it ends; halrun then exits
		defer close(lines)
		for {
			text, err := rd.ReadLine()
			if err != nil {
				return
			}
			select {
			case lines <- text:
			case <-ctx.Done():
				return
			}
			select { // the line has run: the next prompt comes after its output
			case <-next:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(stop)
		// ran lets the reader read on; false once ctx has ended.
		ran := func() bool {
			select {
			case next <- struct{}{}:
				return true
			case <-ctx.Done():
				return false
			}
		}
		var joined strings.Builder
		n, first := 0, 0
		for {
			var text string
			select {
			case <-ctx.Done():
				return
			case t, ok := <-lines:
				if !ok || ctx.Err() != nil {
					return
				}
				text = t
			}
			n++
			if joined.Len() == 0 {
				first = n
			}
			if strings.HasSuffix(text, "\\") && joined.Len()+len(text) <= halfile.MaxLineLen {
				joined.WriteString(strings.TrimSuffix(text, "\\"))
				joined.WriteByte(' ')
				rd.Continued(true)
				if !ran() {
					return
				}
				continue
			}
			rd.Continued(false)
			joined.WriteString(text)
			line := joined.String()
			joined.Reset()
			if f := strings.Fields(line); len(f) > 0 && (strings.EqualFold(f[0], "quit") || strings.EqualFold(f[0], "exit")) {
				return
			}
			cmds, err := po.ParseLineAt("<stdin>", first, line)
			for _, c := range cmds {
				if err = exec(c); err != nil {
					break
				}
			}
			if err != nil {
				fmt.Fprintln(errs, "halrun:", err)
			}
			if !ran() {
				return
			}
		}
	}()
	return done
}

// programGrace is how long the programs loadusr started get to exit
// after SIGTERM when halrun ends, before SIGKILL.
const programGrace = 5 * time.Second

// load runs a parsed .hal file as hal.HAL.Load does, with loadusr,
// waitusr and unloadusr run by ld. start and stop take effect after
// every other command, or, as in LinuxCNC, before a loadusr, waitusr,
// unloadusr, lock or unlock that follows them: a program loadusr -w waits for (a
// sampler, a streamer) then sees the threads run.
func load(ctx context.Context, out io.Writer, h *hal.HAL, ld *usercomp.Loader, cmds []halfile.Command) error {
	var run *halfile.Command
	for i, c := range cmds {
		switch {
		case c.Verb == "start" || c.Verb == "stop":
			run = &cmds[i]
			continue
		case run != nil && (usercomp.IsUserVerb(c.Verb) || hal.FlushesStart(c.Verb)):
			if err := h.Exec(out, *run); err != nil {
				return err
			}
			run = nil
		}
		if usercomp.IsUserVerb(c.Verb) || c.Verb == "unload" {
			user, err := ld.Exec(ctx, c)
			if err != nil {
				return c.At(err)
			}
			if user {
				continue
			}
		}
		if err := h.Exec(out, c); err != nil {
			return err
		}
	}
	if run != nil {
		return h.Exec(out, *run)
	}
	return nil
}

// cleanup removes the data and stats segments and the socket that a dead
// host of c's instance left: what hal.New and halctl.Serve replace at a
// start, without starting. A live host's are refused, and kept.
func cleanup(out io.Writer, c config) error {
	instance, _, err := cli.Resolve(c.rt)
	if err != nil {
		return err
	}
	sock := halctl.SocketPath(c.shmDir, instance)
	so := shm.Options{Dir: c.shmDir, Instance: instance}
	var left []string
	for _, p := range []string{so.Path(uint32(c.dataKey)), so.Path(uint32(c.statsKey)), sock} {
		if _, err := os.Lstat(p); err == nil {
			left = append(left, p)
		}
	}
	if len(left) == 0 {
		fmt.Fprintf(out, "halrun -U: instance %d left nothing behind\n", instance)
		return nil
	}
	if conn, err := net.Dial("unix", sock); err == nil {
		conn.Close()
		return fmt.Errorf("-U: a live host serves instance %d on %s; end it (Ctrl-C) instead: %w", instance, sock, rtapi.ErrInvalid)
	}
	rt, err := rtapi.Open(c.rt)
	if err != nil {
		return err
	}
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{DataKey: uint32(c.dataKey), StatsKey: uint32(c.statsKey), ShmDir: c.shmDir})
	if err != nil {
		return fmt.Errorf("-U: instance %d: %w; a live host's segments are kept", instance, err)
	}
	srv, err := halctl.Serve(h, sock, halctl.Options{})
	if err != nil {
		return errors.Join(fmt.Errorf("-U: %w", err), h.Close())
	}
	if err := errors.Join(srv.Close(), h.Close()); err != nil {
		return err
	}
	fmt.Fprintf(out, "halrun -U: instance %d: removed %s\n", instance, strings.Join(left, ", "))
	return nil
}

// errInjected is the panic value of an injected fault.
var errInjected = errors.New("halrun: injected fault (-fault-after)")

// injectFaults puts a function at the head of every thread's chain that
// panics once after has passed. The channel gets the threads' names once
// they have all failed. after 0 injects nothing.
func injectFaults(h *hal.HAL, after time.Duration) (<-chan []string, error) {
	if after == 0 {
		return nil, nil
	}
	var fire atomic.Bool
	threads := h.Threads()
	for _, th := range threads {
		name := "halrun.inject-fault." + th.Name()
		if _, err := h.Export(name, func(time.Duration, int64) {
			if fire.Load() {
				panic(errInjected)
			}
		}); err != nil {
			return nil, err
		}
		if err := h.AddFunct(name, th.Name(), hal.First); err != nil {
			return nil, err
		}
	}
	faulted := make(chan []string, 1)
	time.AfterFunc(after, func() {
		fire.Store(true)
		var names []string
		for _, th := range threads {
			<-th.Done()
			names = append(names, th.Name())
		}
		faulted <- names
	})
	return faulted, nil
}

// withoutInjected drops the injected faults from the errors the threads
// ended with.
func withoutInjected(err error) error {
	var kept []error
	for _, e := range flatten(err) {
		var pe *hal.PanicError
		if errors.As(e, &pe) && pe.Value == errInjected {
			continue
		}
		kept = append(kept, e)
	}
	return errors.Join(kept...)
}

func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
