// Command halcmd inspects and changes a running HAL host (examples/halrun;
// examples/halhost with -data-key 0x48414c50) from another process, with
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
// getp, gets, setp, sets and show comp|pin|param|sig read and write the
// host's data segment directly: a value change is one atomic store into
// shared memory. Everything else (net, unlinkp, addf, delf, newsig,
// delsig, linkps, save, show funct|thread|all, start, stop, loadrt) goes to
// the host's command socket and runs on the host's non-real-time
// goroutine. With -f, commands run in order and the first error stops
// halcmd, naming FILE:LINE; as in halrun, the file may use [SECTION]KEY of
// the INI file -i (or $INI_FILE_NAME) names, $VAR and $(VAR) of the
// environment, and source FILE.
//
// halcmd finds the socket with control.DialInstance (the host's -shm-dir,
// else its own runtime directory, else root's /run/gortapi) and talks to
// it only if its directory may be written by root or this user alone and
// its listener is root or this user; the host's output is printed with
// its control bytes escaped (docs/SECURITY.md, "The control socket").
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/control"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/hal/inifile"
)

type config struct {
	file     string
	ini      string // -i, else $INI_FILE_NAME: the INI file of [SECTION]KEY in -f's file
	instance int
	shmDir   string
	dataKey  uint
	group    string
	args     []string
}

func main() {
	var c config
	flag.StringVar(&c.file, "f", "", "run the commands of this .hal file")
	flag.StringVar(&c.ini, "i", "", "INI file of the [SECTION]KEY the -f file names (default $INI_FILE_NAME)")
	flag.IntVar(&c.instance, "rtapi.instance", 0, "the host's rtapi instance")
	flag.StringVar(&c.shmDir, "shm-dir", "", "directory of the host's segments and socket (default: segments in /dev/shm, the socket in /run/gortapi for root, $XDG_RUNTIME_DIR/gortapi otherwise)")
	cli.KeyVar(flag.CommandLine, &c.dataKey, "data-key", control.DefaultDataKey, "shared-memory key of the host's data segment")
	flag.StringVar(&c.group, "group", "", "trust segments and a control socket directory of this group (the host's -rtapi.shm-group)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: halcmd [flags] COMMAND [ARGS...] | halcmd [flags] -f FILE.hal")
		flag.PrintDefaults()
	}
	flag.Parse()
	c.args = flag.Args()
	if err := run(os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "halcmd:", err)
		os.Exit(cli.ExitCode(err))
	}
}

// session holds what halcmd attached to, opened on first use.
type session struct {
	c      config
	data   *hal.Data
	client *control.Client
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
	if c.dataKey == 0 || c.dataKey > 0xffffffff {
		return cli.Usagef("-data-key must be a non-zero 32-bit key")
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
	if s.data != nil {
		s.data.Close()
	}
	if s.client != nil {
		s.client.Close()
	}
}

func (s *session) attach() (*hal.Data, error) {
	if s.data == nil {
		o := hal.MonitorOptions{Key: uint32(s.c.dataKey), Instance: s.c.instance, Dir: s.c.shmDir, Group: s.c.group}
		d, err := hal.AttachData(o)
		if errors.Is(err, os.ErrPermission) {
			// A user who may read the segment but not write it (mode 0640
			// of the group) still shows and gets; setp and sets say why not.
			o.ReadOnly = true
			if ro, rerr := hal.AttachData(o); rerr == nil {
				d, err = ro, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("no HAL host of instance %d (is halrun running?): %w", s.c.instance, err)
		}
		s.data = d
	}
	return s.data, nil
}

func (s *session) exec(out io.Writer, cmd halfile.Command) error {
	a := cmd.Args
	switch cmd.Verb {
	case "setp", "sets":
		d, err := s.attach()
		if err != nil {
			return err
		}
		if cmd.Verb == "setp" {
			return cmd.At(d.SetP(a[0], a[1]))
		}
		return cmd.At(d.SetS(a[0], a[1]))
	case "getp", "gets":
		d, err := s.attach()
		if err != nil {
			return err
		}
		snap, err := d.Read()
		if err != nil {
			return err
		}
		v, err := value(snap, cmd.Verb == "gets", a[0])
		if err != nil {
			return cmd.At(err)
		}
		_, err = fmt.Fprintln(out, v)
		return err
	case "show":
		if len(a) > 0 && (a[0] == "comp" || a[0] == "pin" || a[0] == "param" || a[0] == "sig" || a[0] == "signal" || a[0] == "parameter") {
			d, err := s.attach()
			if err != nil {
				return err
			}
			snap, err := d.Read()
			if err != nil {
				return err
			}
			pattern := ""
			if len(a) > 1 {
				pattern = a[1]
			}
			return cmd.At(hal.WriteShow(out, a[0], pattern, snap))
		}
	}
	if s.client == nil {
		cl, err := control.DialInstance(s.c.shmDir, s.c.instance, control.Options{Group: s.c.group})
		if err != nil {
			return fmt.Errorf("no HAL host of instance %d (is halrun running?): %w", s.c.instance, err)
		}
		s.client = cl
	}
	text, err := s.client.Do(cmd)
	if err != nil {
		var he *control.HostError
		if errors.As(err, &he) {
			return cmd.At(err)
		}
		return err
	}
	_, err = io.WriteString(out, text)
	return err
}

// value finds a pin or parameter (getp) or a signal (gets).
func value(s hal.DataSnapshot, signal bool, name string) (string, error) {
	if signal {
		for _, sig := range s.Signals {
			if sig.Name == name {
				return hal.FormatValue(sig.Type, sig.Value), nil
			}
		}
		return "", fmt.Errorf("signal %q does not exist: %w", name, rtapi.ErrInvalid)
	}
	for _, p := range s.Params {
		if p.Name == name {
			return hal.FormatValue(p.Type, p.Value), nil
		}
	}
	for _, p := range s.Pins {
		if p.Name == name {
			return hal.FormatValue(p.Type, p.Value), nil
		}
	}
	return "", fmt.Errorf("pin or parameter %q does not exist: %w", name, rtapi.ErrInvalid)
}
