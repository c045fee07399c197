// Command halcmd inspects and changes a running HAL host (examples/halrun,
// examples/halhost) from another process, with
// LinuxCNC's verbs and output shapes:
//
//	halcmd show pin pid.0            # comp, pin, param, sig, funct, thread
//	halcmd getp pid.0.Pgain
//	halcmd setp pid.0.Pgain 60
//	halcmd sets enable FALSE
//	halcmd net vel-cmd pid.0.output => sim_motor.0.command
//	halcmd unlinkp pid.0.feedback
//	halcmd addf scale.0 servo 1
//	halcmd save > running.hal
//	halcmd -f changes.hal
//
// Every command goes to the host's command socket (package halctl) and
// runs there, on the host's non-real-time goroutine, under the host's
// rules and its one who-may check: setp and sets as much as net or addf
// (HACKING.md, "One way into a running HAL"). With no host listening,
// halcmd says so and changes nothing. With -f, commands run in order and the first error stops
// halcmd, naming FILE:LINE; as in halrun, the file may use [SECTION]KEY of
// the INI file -i (or $INI_FILE_NAME) names, $VAR and $(VAR) of the
// environment, and source FILE.
//
// loadusr [-W|-Wn NAME|-w] PROGRAM ARGS, waitusr NAME and unloadusr
// NAME|all run in halcmd, as LinuxCNC's: loadusr starts PROGRAM here,
// with halcmd's output, and halcmd may end before it (-W waits until its
// component is ready in the host, -w until it exits); waitusr and
// unloadusr read the host's components (show comp) and unloadusr sends
// their processes SIGTERM. The program gets halcmd's instance (and
// -shm-dir's socket) in its environment and finds the host as halcmd
// did (package rtapi/hal/usercomp). unload NAME|all runs its user-space
// part here too (unloadusr) and sends the rest, unloadrt, to the host.
//
// The instance is -rtapi.instance, else $RTAPI_INSTANCE, as for halrun
// and every rtapi program (rtapi.RegisterShmFlags); -rtapi.shm-group (or
// -group) trusts a socket directory of that group.
//
// halcmd finds the socket with halctl.DialInstance (the host's -shm-dir,
// else its own runtime directory, else root's /run/gortapi) and talks to
// it only if its directory may be written by root or this user alone and
// its listener is root or this user; the host's output is printed with
// its control bytes escaped (docs/SECURITY.md, "The control socket").
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/examples/internal/halprompt"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halctl"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/inifile"
	"github.com/gortapi/gortapi/rtapi/hal/usercomp"
)

type config struct {
	fileMode  bool   // -f: commands from file, else from standard input
	file      string // -f's FILE, "" for standard input
	ini       string // -i, else $INI_FILE_NAME: the INI file of [SECTION]KEY in -f's file
	instance  int
	shmDir    string
	group     string
	args      []string
	keepGoing bool // -k: go on after a failed command; exit 1 at the end
	veryQuiet bool // -Q: show, list, status and save print nothing
	script    bool // -s: show in scriptmode formats (halctl.Client.DoScript); the prompt on a terminal is "%%\n", with no line editing
	echo      bool // -e (and the echo verb): each line read is echoed on stderr
	verbose   bool // -v, -V: what each command did (infoLines)
}

// errFailed ends a halcmd -k, or one reading standard input, whose
// failed commands were each reported already: exit status 1.
var errFailed = errors.New("a command failed")

// stdin is where halcmd -f without a FILE reads; tests replace it.
var stdin = os.Stdin

func main() { os.Exit(command(os.Args[1:], os.Stdout, os.Stderr)) }

// command runs halcmd with args: its exit status (HACKING.md, "Examples:
// one command-line style"). The instance and group come as every rtapi
// program's do (rtapi.RegisterShmFlags): -rtapi.instance, else
// $RTAPI_INSTANCE; -rtapi.shm-group (or its older name -group).
func command(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("halcmd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[flags] COMMAND [ARGS...] | halcmd [flags] -f [FILE.hal]",
		"With -f and no FILE, commands come from standard input; on a terminal with a\n"+
			"\"halcmd: \" prompt, line editing, history and TAB completion. quit or exit ends.\n"+
			"Single-letter flags combine as in LinuxCNC's halcmd: -kf.")
	opts := rtapi.RegisterShmFlags(fs)
	fs.BoolVar(&c.fileMode, "f", false, "run the commands of the .hal file given as the first argument, or of standard input without one")
	fs.StringVar(&c.ini, "i", "", "INI file of the [SECTION]KEY the -f file names (default $INI_FILE_NAME)")
	fs.BoolVar(&c.keepGoing, "k", false, "keep going after a failed command; exit 1 at the end")
	fs.BoolVar(new(bool), "q", false, "quiet: print errors only (the default)")
	fs.BoolVar(&c.veryQuiet, "Q", false, "very quiet: show, list, status and save print nothing")
	fs.BoolVar(&c.script, "s", false, "script friendly: show prints without headers in LinuxCNC's scriptmode formats; on a terminal, prompt \"%%\" on its own line, no line editing")
	fs.BoolVar(&c.verbose, "v", false, "verbose: print what each command did, as LinuxCNC's halcmd_info")
	fs.BoolVar(&c.verbose, "V", false, "very verbose: the same as -v here")
	fs.BoolVar(&c.echo, "e", false, "echo each command line read on stderr")
	fs.StringVar(&c.shmDir, "shm-dir", "", "directory of the host's control socket, its -shm-dir (default: /run/gortapi for root, $XDG_RUNTIME_DIR/gortapi otherwise)")
	fs.StringVar(&c.group, "group", "", "the same as -rtapi.shm-group")
	err := fs.Parse(expandShortFlags(fs, args))
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		err = cli.UsageError{Err: err}
	}
	if err == nil {
		c.args = fs.Args()
		if c.fileMode && len(c.args) > 0 {
			c.file, c.args = c.args[0], c.args[1:]
		}
		opts.ShmGroup = cmp.Or(opts.ShmGroup, c.group)
		c.instance, c.group, err = cli.Resolve(*opts)
	}
	if err == nil {
		err = run(stdout, stderr, c)
	}
	if errors.Is(err, errFailed) {
		return 1
	}
	return cli.Exit("halcmd", stderr, err)
}

// expandShortFlags splits clusters of LinuxCNC halcmd's single-letter
// flags ("-kf" is "-k -f") among args, up to the first argument that is
// no flag or a flag's value, as getopt reads them. Any other word that
// begins with "-" is left to fs.
func expandShortFlags(fs *flag.FlagSet, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			return append(out, args[i:]...)
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if fs.Lookup(name) == nil && len(name) > 1 && strings.Trim(name, "fkqQsvVei") == "" &&
			!strings.Contains(name[:len(name)-1], "i") && !hasValue {
			for _, r := range name {
				out = append(out, "-"+string(r))
			}
			name = name[len(name)-1:]
		} else {
			out = append(out, a)
		}
		if f := fs.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// session holds the connection to the host, made on first use.
type session struct {
	c      config
	client *halctl.Client
	loader *usercomp.Loader // loadusr, waitusr, unloadusr: run here, as LinuxCNC's halcmd does
}

func run(out, errOut io.Writer, c config) error {
	var cmds []halfile.Command
	switch {
	case c.fileMode && len(c.args) > 0:
		return cli.Usagef("give a command or -f FILE, not both")
	case c.ini != "" && !c.fileMode:
		return cli.Usagef("-i may only be used together with -f")
	case c.fileMode && c.file == "":
		s := &session{c: c}
		defer s.close()
		return s.stream(out, errOut, stdin)
	case c.file != "":
		o := halfile.Options{}
		if ini := cmp.Or(c.ini, os.Getenv("INI_FILE_NAME")); ini != "" {
			f, err := inifile.Load(ini)
			if err != nil {
				return err
			}
			o.INI = f.Find
		}
		var err error
		if cmds, err = o.ParseFile(c.file); err != nil {
			return err
		}
	case len(c.args) > 0:
		cmd, err := halfile.ParseArgs(c.args)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		cmd.File, cmd.Line = "halcmd", 1
		cmds = []halfile.Command{cmd}
	default:
		return cli.Usagef("give a command (show, getp, setp, net, ...) or -f FILE")
	}
	s := &session{c: c}
	defer s.close()
	failed := false
	for _, cmd := range cmds {
		if err := s.exec(out, cmd); err != nil {
			if !errors.As(err, new(*halfile.Error)) && c.file != "" {
				err = cmd.At(err)
			}
			if !c.keepGoing {
				return err
			}
			fmt.Fprintf(errOut, "halcmd: %v\n", err)
			failed = true
		}
	}
	if failed {
		return errFailed
	}
	return nil
}

func (s *session) close() {
	if s.client != nil {
		s.client.Close()
	}
}

func (s *session) exec(out io.Writer, cmd halfile.Command) error {
	switch cmd.Verb {
	case "echo":
		s.c.echo = true
	case "unecho":
		s.c.echo = false
	case "show", "list", "status", "save":
		if s.c.veryQuiet {
			return nil // -Q: LinuxCNC's do_show_cmd and the others print nothing
		}
	}
	switch {
	case cmd.Verb == "help" || cmd.Verb == "echo" || cmd.Verb == "unecho":
		// Text of halcmd's own, as the host would print it: no host needed.
		var h string
		switch cmd.Verb {
		case "help":
			if len(cmd.Args) > 0 {
				h = halfile.Help(cmd.Args[0])
			} else {
				h = halfile.Help("")
			}
		case "echo":
			h = "Echo on\n"
		default:
			h = "Echo off\n"
		}
		_, err := io.WriteString(out, h)
		return err
	case cmd.Verb == "save" && len(cmd.Args) == 2:
		// halcmd writes FILE, from the host's "save KIND" (the host
		// writes no file a client names).
		var b strings.Builder
		if err := s.exec(&b, halfile.Command{File: cmd.File, Line: cmd.Line, From: cmd.From, Verb: "save", Args: cmd.Args[:1]}); err != nil {
			return err
		}
		if err := os.WriteFile(cmd.Args[1], []byte(b.String()), 0o666); err != nil {
			return cmd.At(fmt.Errorf("Can't open 'save' destination '%s': %w", cmd.Args[1], err))
		}
		return nil
	case cmd.Verb == "loadusr":
		// halcmd's own check (do_loadusr_cmd), on the host's lock.
		if err := s.dial(); err != nil {
			return err
		}
		text, err := s.client.Do(halfile.Command{Verb: "status", Args: []string{"lock"}})
		if err != nil {
			return cmd.At(err)
		}
		if lockValue(text)&1 != 0 {
			return cmd.At(fmt.Errorf("HAL is locked, loading of programs is not permitted: %w", rtapi.ErrPermission))
		}
	}
	if usercomp.IsUserVerb(cmd.Verb) || cmd.Verb == "unload" {
		if s.loader == nil {
			// The program finds the host halcmd talks to.
			env := []string{usercomp.EnvInstance + "=" + strconv.Itoa(s.c.instance)}
			if s.c.shmDir != "" {
				env = usercomp.Env(halctl.SocketPath(s.c.shmDir, s.c.instance), s.c.instance)
			}
			s.loader = &usercomp.Loader{Comps: s.comps, Stdout: out, Env: env}
		}
		user, err := s.loader.Exec(context.Background(), cmd)
		if err != nil || user {
			return cmd.At(err)
		}
	}
	if err := s.dial(); err != nil {
		return err
	}
	do := s.client.Do
	if s.c.script {
		do = s.client.DoScript // -s: show prints LinuxCNC's scriptmode formats
	}
	text, err := do(cmd)
	if err != nil {
		var he *halctl.HostError
		if errors.As(err, &he) {
			return cmd.At(err)
		}
		return err
	}
	if s.c.verbose {
		pos := cmd.Pos()
		if cmd.File == "halcmd" {
			pos = "<commandline>:0" // LinuxCNC's name and line for argv
		}
		for _, line := range infoLines(cmd) {
			text += pos + ": " + line
		}
	}
	_, err = io.WriteString(out, text)
	return err
}

// infoLines is what LinuxCNC's halcmd -v prints (halcmd_info, after the
// position) when cmd succeeded, its bytes: lock and unlock's lines have
// no newline there.
func infoLines(cmd halfile.Command) []string {
	a := cmd.Args
	switch cmd.Verb {
	case "lock":
		return []string{"Locking completed"}
	case "unlock":
		return []string{"Unlocking completed"}
	case "linkps":
		return []string{fmt.Sprintf("Pin '%s' linked to signal '%s'\n", a[0], a[1])}
	case "net":
		var out []string
		for _, p := range a[1:] {
			out = append(out, fmt.Sprintf("Pin '%s' linked to signal '%s'\n", p, a[0]))
		}
		return out
	case "unlinkp":
		return []string{fmt.Sprintf("Pin '%s' unlinked\n", a[0])}
	case "start":
		return []string{"Realtime threads started\n"}
	case "stop":
		return []string{"Realtime threads stopped\n"}
	case "addf":
		return []string{fmt.Sprintf("Function '%s' added to thread '%s'\n", a[0], a[1])}
	case "delf":
		if len(a) == 2 {
			return []string{fmt.Sprintf("Function '%s' removed from thread '%s'\n", a[0], a[1])}
		}
	case "alias":
		return []string{fmt.Sprintf("%s '%s' aliased to '%s'\n", a[0], a[1], a[2])}
	case "unalias":
		return []string{fmt.Sprintf("%s '%s' unaliased\n", a[0], a[1])}
	case "loadrt":
		return []string{fmt.Sprintf("Realtime module '%s' loaded\n", a[0])}
	case "delsig":
		if a[0] != "all" {
			return []string{fmt.Sprintf("Signal '%s' deleted'\n", a[0])}
		}
	}
	return nil
}

// comps lists the host's components, from its "show comp".
func (s *session) comps() ([]hal.CompInfo, error) {
	if err := s.dial(); err != nil {
		return nil, err
	}
	text, err := s.client.Do(halfile.Command{Verb: "show", Args: []string{"comp"}})
	if err != nil {
		return nil, err
	}
	return halprompt.ParseShowComp(text), nil
}

// dial connects to the host on first use.
func (s *session) dial() error {
	if s.client == nil {
		cl, err := halctl.DialInstance(s.c.shmDir, s.c.instance, halctl.Options{Group: s.c.group})
		if err != nil {
			return fmt.Errorf("no HAL host of instance %d (is halrun running?): %w", s.c.instance, err)
		}
		s.client = cl
	}
	return nil
}

// lockValue reads the lock of "status lock" ("  current lock value N
// (NN)"); 0 where the line is missing.
func lockValue(text string) int {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "current lock value "); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}
