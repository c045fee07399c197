package comps

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gortapi/gortapi/internal/gpio"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

func init() { hal.Register("hal_gpio", loadHalGPIO) }

// hal_gpio.c's MAX_CHAN: the most names each of its arguments takes.
const gpioMaxChan = 128

// gpioDev is where loadHalGPIO looks for GPIO chips; tests replace it.
var gpioDev = "/dev"

// gpioLoaded, when set (by tests), sees each hal_gpio loadrt makes.
var gpioLoaded func(*halGPIO)

// gpioConsumer is the label the kernel shows for hal_gpio's lines
// (gpioinfo, and the error of a second consumer). LinuxCNC's is "LinuxCNC".
const gpioConsumer = "gortapi"

// hal_gpio.c's line flags: its bits 0-4 are libgpiod's, 5 and 6 its own.
const (
	gpioOpenDrain = 1 << iota
	gpioOpenSource
	gpioBiasDisable
	gpioPullDown
	gpioPullUp
	gpioInvert
	gpioReset
)

// gpioArgs are hal_gpio's loadrt arguments, each a comma-separated list
// of line names, in the order hal_gpio.c's flags() tests them.
var gpioArgs = []struct {
	key  string
	flag int
}{
	{"opendrain", gpioOpenDrain}, {"opensource", gpioOpenSource}, {"biasdisable", gpioBiasDisable},
	{"pulldown", gpioPullDown}, {"pullup", gpioPullUp}, {"invert", gpioInvert}, {"reset", gpioReset},
}

// loadHalGPIO is hal_gpio.c's rtapi_app_main (the libgpiod 2 build), on
// the kernel's GPIO character device: inputs= and outputs= name lines as
// the kernel does (GPIO17), each found on whichever /dev/gpiochipN has
// it; invert=, reset=, opendrain=, opensource=, biasdisable=, pulldown=
// and pullup= flag some of them. Per chip, the inputs are one request and
// the outputs another (another per 64 lines). It makes pins
// hal_gpio.NAME-in and NAME-in-not per input, hal_gpio.NAME-out per
// output, functions hal_gpio.read and hal_gpio.write, and, when a line
// is in reset=, parameter hal_gpio.reset_ns and function hal_gpio.reset.
// Outputs start at their safe value (the value for a FALSE pin), and
// each thread existing now gets a safe state writing it (docs/GPIO.md).
// A name on no chip or on two, or a line in use (a *gpio.BusyError
// naming its consumer), is refused.
func loadHalGPIO(h *hal.HAL, a *hal.LoadArgs) error {
	lists := map[string][]string{}
	for _, key := range []string{"inputs", "outputs", "invert", "reset", "opendrain", "opensource", "biasdisable", "pulldown", "pullup"} {
		l, err := mpStringArray(a, key, gpioMaxChan)
		if err != nil {
			return err
		}
		lists[key] = l
	}
	g := &halGPIO{}
	ok := false
	defer func() {
		if !ok {
			g.close()
		}
	}()
	var chips []*gpio.Chip
	defer func() {
		for _, c := range chips {
			c.Close()
		}
	}()
	if len(lists["inputs"])+len(lists["outputs"]) > 0 {
		var err error
		if chips, err = openGPIOChips(gpioDev); err != nil {
			return fmt.Errorf("loadrt hal_gpio: %w", err)
		}
	}
	flags := func(name string) int {
		f := 0
		for _, arg := range gpioArgs {
			if slices.Contains(lists[arg.key], name) {
				f |= arg.flag
			}
		}
		if f&gpioReset != 0 {
			g.resetActive = true
		}
		return f
	}
	var err error
	if g.in, err = requestGPIO(chips, lists["inputs"], false, flags); err != nil {
		return err
	}
	if g.out, err = requestGPIO(chips, lists["outputs"], true, flags); err != nil {
		return err
	}
	c, err := h.NewComponent(a.Name)
	if err != nil {
		return err
	}
	for i := range g.in {
		b := &g.in[i]
		for j, name := range b.names {
			b.pins[j] = c.Bit("hal_gpio."+name+"-in", hal.Out)
			b.nots[j] = c.Bit("hal_gpio."+name+"-in-not", hal.Out)
			b.nots[j].Set(true)
		}
	}
	for i := range g.out {
		b := &g.out[i]
		for j, name := range b.names {
			b.pins[j] = c.Bit("hal_gpio."+name+"-out", hal.In)
		}
	}
	c.Export("hal_gpio.read", g.read)
	c.ExportContext("hal_gpio.write", g.write)
	if g.resetActive {
		g.resetNS = c.U32Param("hal_gpio.reset_ns", hal.RW)
		c.ExportContext("hal_gpio.reset", g.reset)
	}
	if err := c.Ready(); err != nil {
		return err
	}
	if len(g.out) > 0 {
		for _, th := range h.Threads() {
			if err := th.AddSafeState("hal_gpio", func() { g.safeOn(th) }); err != nil {
				return fmt.Errorf("loadrt hal_gpio: %w", err)
			}
		}
	}
	c.OnExit(func() { g.safe(); g.close() })
	ok = true
	if gpioLoaded != nil {
		gpioLoaded(g)
	}
	return nil
}

// openGPIOChips opens every GPIO chip in dev, in gpiochipN order.
func openGPIOChips(dev string) ([]*gpio.Chip, error) {
	paths, err := gpio.Chips(dev)
	if err != nil {
		return nil, err
	}
	var chips []*gpio.Chip
	for _, p := range paths {
		c, err := gpio.Open(p)
		if err != nil {
			for _, c := range chips {
				c.Close()
			}
			return nil, err
		}
		chips = append(chips, c)
	}
	return chips, nil
}

// requestGPIO finds each named line on the chips and requests them, per
// chip in the order the names were given, at most gpio.MaxLines a
// request. A name on no chip, or on two, is ErrInvalid.
func requestGPIO(chips []*gpio.Chip, names []string, output bool, flags func(string) int) ([]gpioBank, error) {
	if len(names) == 0 {
		return nil, nil
	}
	kind := "inputs"
	if output {
		kind = "outputs"
	}
	type found struct {
		chip   int
		offset int
	}
	at := make([]found, len(names))
	var chipNames []string
	for i := range at {
		at[i].chip = -1
	}
	for ci, c := range chips {
		lineNames, err := c.Names()
		if err != nil {
			return nil, fmt.Errorf("loadrt hal_gpio: %w", err)
		}
		chipNames = append(chipNames, c.Name)
		for i, name := range names {
			off := slices.Index(lineNames, name)
			if off < 0 {
				continue
			}
			if at[i].chip >= 0 {
				return nil, fmt.Errorf("loadrt hal_gpio: %s=%s: line %q is on %s and on %s: %w", kind, strings.Join(names, ","), name, chips[at[i].chip].Name, c.Name, rtapi.ErrInvalid)
			}
			at[i] = found{ci, off}
		}
	}
	for i, name := range names {
		if at[i].chip < 0 {
			return nil, fmt.Errorf("loadrt hal_gpio: %s: no GPIO line is named %q (chips searched: %v): %w", kind, name, chipNames, rtapi.ErrInvalid)
		}
	}
	var banks []gpioBank
	for ci, c := range chips {
		var bank *gpioBank
		var cfg []gpio.LineConfig
		flush := func() error {
			if bank == nil {
				return nil
			}
			lines, err := c.Request(gpioConsumer, cfg)
			if err != nil {
				return fmt.Errorf("loadrt hal_gpio: %s: %w", kind, err)
			}
			bank.lines = lines
			bank.pins = make([]hal.Bit, len(bank.names))
			bank.nots = make([]hal.Bit, len(bank.names))
			bank, cfg = nil, nil
			return nil
		}
		for i, name := range names {
			if at[i].chip != ci {
				continue
			}
			if bank == nil {
				banks = append(banks, gpioBank{})
				bank = &banks[len(banks)-1]
			}
			f := flags(name)
			lc := gpio.LineConfig{Offset: at[i].offset, Flags: gpioKernelFlags(f, output)}
			n := len(bank.names)
			if output && f&gpioInvert != 0 {
				bank.invert |= 1 << n
				lc.Value = true // the safe value: that of a FALSE pin
			}
			if output && f&gpioReset != 0 {
				bank.reset |= 1 << n
			}
			bank.names = append(bank.names, name)
			bank.mask |= 1 << n
			cfg = append(cfg, lc)
			if len(cfg) == gpio.MaxLines {
				if err := flush(); err != nil {
					closeBanks(banks)
					return nil, err
				}
			}
		}
		if err := flush(); err != nil {
			closeBanks(banks)
			return nil, err
		}
	}
	return banks, nil
}

// gpioKernelFlags maps hal_gpio.c's flags to the uAPI's, as its
// setup_lines does with libgpiod's settings.
func gpioKernelFlags(f int, output bool) uint64 {
	k := gpio.FlagInput
	if output {
		k = gpio.FlagOutput
	}
	for _, m := range []struct {
		hal  int
		kern uint64
	}{
		{gpioOpenDrain, gpio.FlagOpenDrain}, {gpioOpenSource, gpio.FlagOpenSource}, {gpioBiasDisable, gpio.FlagBiasDisabled},
		{gpioPullDown, gpio.FlagBiasPullDown}, {gpioPullUp, gpio.FlagBiasPullUp},
	} {
		if f&m.hal != 0 {
			k |= m.kern
		}
	}
	return k
}

func closeBanks(banks []gpioBank) {
	for i := range banks {
		if banks[i].lines != nil {
			banks[i].lines.Close()
			banks[i].lines = nil
		}
	}
}

// close releases every request.
func (g *halGPIO) close() {
	closeBanks(g.in)
	closeBanks(g.out)
}

// safeOn is the safe state hal_gpio adds to each thread: when th runs
// hal_gpio.write or hal_gpio.reset, the outputs go to their safe values.
// A thread that does not drive them leaves them alone, so that its fault
// does not glitch outputs another thread drives.
func (g *halGPIO) safeOn(th *hal.Thread) {
	for _, f := range th.Functs() {
		if f == "hal_gpio.write" || f == "hal_gpio.reset" {
			g.safe()
			return
		}
	}
}

// safe drives every output to its safe value: low, or high when
// inverted, the value a FALSE pin gives. It keeps no state, so it may
// run beside write (the kernel orders the two ioctls).
func (g *halGPIO) safe() {
	for i := range g.out {
		b := &g.out[i]
		if b.lines != nil {
			_ = b.lines.Set(b.invert, b.mask)
		}
	}
}

// mpStringArray reads the loadrt argument key as LinuxCNC's
// RTAPI_MP_ARRAY_STRING does (uspace_rtapi_main.cc do_comp_args):
// comma-separated, at most max items. gortapi refuses an empty item,
// which libgpiod 2's hal_gpio ignores and libgpiod 1's takes as the end.
func mpStringArray(a *hal.LoadArgs, key string, max int) ([]string, error) {
	v, ok := a.Get(key)
	if !ok {
		return nil, nil
	}
	items := strings.Split(v, ",")
	if len(items) > max {
		return nil, fmt.Errorf("loadrt %s: %s=%s: can only take %d arguments: %w", a.Name, key, v, max, rtapi.ErrInvalid)
	}
	for _, it := range items {
		if it == "" {
			return nil, fmt.Errorf("loadrt %s: %s=%s: an empty name: %w", a.Name, key, v, rtapi.ErrInvalid)
		}
	}
	return items, nil
}
