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
// did (package rtapi/hal/usercomp).
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
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halctl"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/inifile"
	"github.com/gortapi/gortapi/rtapi/hal/usercomp"
)

type config struct {
	file     string
	ini      string // -i, else $INI_FILE_NAME: the INI file of [SECTION]KEY in -f's file
	instance int
	shmDir   string
	group    string
	args     []string
}

func main() { os.Exit(command(os.Args[1:], os.Stdout, os.Stderr)) }

// command runs halcmd with args: its exit status (HACKING.md, "Examples:
// one command-line style"). The instance and group come as every rtapi
// program's do (rtapi.RegisterShmFlags): -rtapi.instance, else
// $RTAPI_INSTANCE; -rtapi.shm-group (or its older name -group).
func command(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("halcmd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[flags] COMMAND [ARGS...] | halcmd [flags] -f FILE.hal", "")
	opts := rtapi.RegisterShmFlags(fs)
	fs.StringVar(&c.file, "f", "", "run the commands of this .hal file")
	fs.StringVar(&c.ini, "i", "", "INI file of the [SECTION]KEY the -f file names (default $INI_FILE_NAME)")
	fs.StringVar(&c.shmDir, "shm-dir", "", "directory of the host's control socket, its -shm-dir (default: /run/gortapi for root, $XDG_RUNTIME_DIR/gortapi otherwise)")
	fs.StringVar(&c.group, "group", "", "the same as -rtapi.shm-group")
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		err = cli.UsageError{Err: err}
	}
	if err == nil {
		c.args = fs.Args()
		c.group = cmp.Or(opts.ShmGroup, c.group)
		c.instance, err = instance(*opts)
	}
	if err == nil {
		err = run(stdout, c)
	}
	return cli.Exit("halcmd", stderr, err)
}

// instance resolves o's instance as rtapi.Open does (the flag, else
// $RTAPI_INSTANCE), through an RT that runs no task.
func instance(o rtapi.Options) (int, error) {
	o.Flavor, o.LockMemory, o.ShmGroup = "posix", rtapi.Off, ""
	rt, err := rtapi.Open(o)
	if err != nil {
		return 0, err
	}
	n := rt.Instance()
	return n, rt.Close()
}

// session holds the connection to the host, made on first use.
type session struct {
	c      config
	client *halctl.Client
	loader *usercomp.Loader // loadusr, waitusr, unloadusr: run here, as LinuxCNC's halcmd does
}

func run(out io.Writer, c config) error {
	var cmds []halfile.Command
	switch {
	case c.file != "" && len(c.args) > 0:
		return cli.Usagef("give a command or -f FILE, not both")
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
	for _, cmd := range cmds {
		if err := s.exec(out, cmd); err != nil {
			if errors.As(err, new(*halfile.Error)) || c.file == "" {
				return err
			}
			return cmd.At(err)
		}
	}
	return nil
}

func (s *session) close() {
	if s.client != nil {
		s.client.Close()
	}
}

func (s *session) exec(out io.Writer, cmd halfile.Command) error {
	if usercomp.IsUserVerb(cmd.Verb) {
		if s.loader == nil {
			// The program finds the host halcmd talks to.
			env := []string{usercomp.EnvInstance + "=" + strconv.Itoa(s.c.instance)}
			if s.c.shmDir != "" {
				env = usercomp.Env(halctl.SocketPath(s.c.shmDir, s.c.instance), s.c.instance)
			}
			s.loader = &usercomp.Loader{Comps: s.comps, Stdout: out, Env: env}
		}
		_, err := s.loader.Exec(context.Background(), cmd)
		return cmd.At(err)
	}
	if err := s.dial(); err != nil {
		return err
	}
	text, err := s.client.Do(cmd)
	if err != nil {
		var he *halctl.HostError
		if errors.As(err, &he) {
			return cmd.At(err)
		}
		return err
	}
	_, err = io.WriteString(out, text)
	return err
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
	return parseShowComp(text), nil
}

// parseShowComp reads the rows of "show comp" (hal.WriteShow): ID, Type
// (RT or User), Name, PID (User rows only, as LinuxCNC's halcmd prints
// it), State.
func parseShowComp(text string) []hal.CompInfo {
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
