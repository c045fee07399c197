// Command halpanel is a small HMI-like user-space component, as a
// LinuxCNC pyvcp panel or halmeter: it runs as its own process, makes
// component "halpanel" with pins in a running host (examples/halrun),
// marks it ready, and then, one command a line on standard input,
// shows pin values and sets its OUT pins:
//
//	loadusr -W halpanel                        # in a .hal file: waits until ready
//	net wave siggen.0.sine => halpanel.meter   # wire it as any component
//	net jog  halpanel.jog  => pid.0.command
//
// Standard input:
//
//	show              every pin: NAME VALUE, one a line
//	get NAME          one pin's value ("meter")
//	set NAME VALUE    write an OUT pin ("jog 2.5")
//
// Its pins, by default: meter (float IN), jog (float OUT), enable (bit
// OUT); -name sets the component's name, -pin NAME:TYPE:DIR (repeated)
// its pins instead. It finds the host from the environment halrun's
// loadusr gives it (RTAPI_INSTANCE, GORTAPI_HAL_SOCKET), or from
// -rtapi.instance and -shm-dir. At the end of standard input it runs on
// until SIGTERM (unloadusr) or Ctrl-C; when it ends, or is killed, the
// host removes its component and pins and runs on.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/usercomp"
)

type pinSpec struct {
	name string
	typ  hal.Type
	dir  hal.Dir
}

type pinList []pinSpec

func (l *pinList) String() string { return "" }

// Set reads NAME:TYPE:DIR, DIR in, out or io.
func (l *pinList) Set(s string) error {
	f := strings.Split(s, ":")
	if len(f) != 3 || f[0] == "" {
		return fmt.Errorf("pin %q: want NAME:TYPE:DIR", s)
	}
	t, err := hal.ParseType(f[1])
	if err != nil {
		return err
	}
	d, ok := map[string]hal.Dir{"in": hal.In, "out": hal.Out, "io": hal.IO}[strings.ToLower(f[2])]
	if !ok {
		return fmt.Errorf("pin %q: direction %q (want in, out or io)", s, f[2])
	}
	*l = append(*l, pinSpec{f[0], t, d})
	return nil
}

var defaultPins = pinList{{"meter", hal.TypeFloat, hal.In}, {"jog", hal.TypeFloat, hal.Out}, {"enable", hal.TypeBit, hal.Out}}

func main() {
	var (
		name string
		pins pinList
		o    usercomp.Options
	)
	flag.StringVar(&name, "name", "halpanel", "the component's name")
	flag.Var(&pins, "pin", "a pin NAME:TYPE:DIR (repeat; default meter:float:in, jog:float:out, enable:bit:out)")
	flag.IntVar(&o.Instance, "rtapi.instance", 0, "the host's rtapi instance (default $RTAPI_INSTANCE)")
	flag.StringVar(&o.Dir, "shm-dir", "", "the host's -shm-dir, where its socket is")
	flag.Parse()
	if len(pins) == 0 {
		pins = defaultPins
	}
	cli.Main("halpanel", func(ctx context.Context) error { // ends on SIGTERM and SIGINT
		return run(ctx, os.Stdin, os.Stdout, name, pins, o)
	})
}

func run(ctx context.Context, in io.Reader, out io.Writer, name string, pins pinList, o usercomp.Options) error {
	c, err := usercomp.New(name, o)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, p := range pins {
		if err := c.NewPin(p.name, p.typ, p.dir); err != nil {
			return err
		}
	}
	if err := c.Ready(); err != nil {
		return err
	}
	lines := make(chan string)
	go func() { // ends with standard input; the process may outlive it
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil // SIGTERM, Ctrl-C: Close removes the component
		case line := <-lines:
			if err := command(c, out, pins, strings.Fields(line)); err != nil {
				fmt.Fprintln(os.Stderr, "halpanel:", err)
			}
		}
	}
}

// command runs one line of standard input.
func command(c *usercomp.Component, out io.Writer, pins pinList, w []string) error {
	switch {
	case len(w) == 0:
		return nil
	case w[0] == "show" && len(w) == 1:
		for _, p := range pins {
			v, err := c.Get(p.name)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%s.%s %s\n", c.Name(), p.name, v)
		}
		return nil
	case w[0] == "get" && len(w) == 2:
		v, err := c.Get(w[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s.%s %s\n", c.Name(), w[1], v)
		return nil
	case w[0] == "set" && len(w) == 3:
		return c.Set(w[1], w[2])
	}
	return fmt.Errorf("%q: want show, get NAME or set NAME VALUE", strings.Join(w, " "))
}
