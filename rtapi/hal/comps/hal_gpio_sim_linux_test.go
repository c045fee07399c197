package comps

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/gpio"
	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	simclock "github.com/gortapi/gortapi/rtapi/sim"
)

// These tests drive the kernel's GPIO simulator (gpio-sim, configured
// through configfs): real uAPI ioctls on a real gpiolib chip. They need a
// kernel with CONFIG_GPIO_SIM and root; Debian's kernels lack it, so CI
// runs them in .ci/gpioguest.sh's guest, with GORTAPI_REQUIRE_GPIO_SIM=1
// turning the skip into a failure.

const gpioSimRequireEnv = "GORTAPI_REQUIRE_GPIO_SIM"

// gpioSim is a gpio-sim device of one bank of 64 lines named GPIO0 to
// GPIO63, live until the test ends.
type gpioSim struct {
	dir   string // its configfs directory
	sysfs string // /sys/devices/platform/DEV/CHIP
	chip  string // gpiochipN
}

func requireGPIOSim(t testing.TB) *gpioSim {
	t.Helper()
	const root = "/sys/kernel/config/gpio-sim"
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "needs root to configure gpio-sim"
	default:
		if _, err := os.Stat(root); err != nil {
			why = fmt.Sprintf("needs a kernel with CONFIG_GPIO_SIM and configfs mounted on /sys/kernel/config (%v)", err)
		}
	}
	if why != "" {
		why += "; CI runs it in .ci/gpioguest.sh"
		if os.Getenv(gpioSimRequireEnv) == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	s := &gpioSim{dir: filepath.Join(root, fmt.Sprintf("gortapi-%d", os.Getpid()))}
	write := func(path, v string) {
		t.Helper()
		require.NoError(t, os.WriteFile(path, []byte(v), 0o644))
	}
	require.NoError(t, os.Mkdir(s.dir, 0o755))
	bank := filepath.Join(s.dir, "bank0")
	require.NoError(t, os.Mkdir(bank, 0o755))
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(s.dir, "live"), []byte("0"), 0o644)
		for i := range 64 {
			os.Remove(filepath.Join(bank, fmt.Sprintf("line%d", i)))
		}
		os.Remove(bank)
		os.Remove(s.dir)
	})
	write(filepath.Join(bank, "num_lines"), "64")
	write(filepath.Join(bank, "label"), "gortapi-sim")
	for i := range 64 {
		line := filepath.Join(bank, fmt.Sprintf("line%d", i))
		require.NoError(t, os.Mkdir(line, 0o755))
		write(filepath.Join(line, "name"), fmt.Sprintf("GPIO%d", i))
	}
	write(filepath.Join(s.dir, "live"), "1")
	dev := s.read(t, filepath.Join(s.dir, "dev_name"))
	s.chip = s.read(t, filepath.Join(bank, "chip_name"))
	s.sysfs = filepath.Join("/sys/devices/platform", dev, s.chip)
	return s
}

func (s *gpioSim) read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

// value is what gpio-sim holds on line n: what its consumer drives, or
// its pull when it is an input or free.
func (s *gpioSim) value(t testing.TB, n int) string {
	return s.read(t, filepath.Join(s.sysfs, fmt.Sprintf("sim_gpio%d", n), "value"))
}

// pull sets line n's pull ("pull-up" or "pull-down"): what an input reads.
func (s *gpioSim) pull(t testing.TB, n int, pull string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(s.sysfs, fmt.Sprintf("sim_gpio%d", n), "pull"), []byte(pull), 0o644))
}

// eventually polls cond until it holds; the bound is only against a hang.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("never happened: %s", what)
		}
	}
}

func gpioHAL(t testing.TB, flavor, src string) *hal.HAL {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: flavor})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	cmds, err := halfile.Parse(t.Name()+".hal", strings.NewReader(src))
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	return h
}

// TestHalGPIOOnGPIOSim runs a real-time HAL thread that writes two
// outputs and reads two inputs of a gpio-sim chip, checks each output in
// gpio-sim's sysfs value and drives each input by its pull, faults the
// thread and checks the safe state, and shows a second consumer refused.
func TestHalGPIOOnGPIOSim(t *testing.T) {
	sim := requireGPIOSim(t)
	rttest.RequireRT(t)
	for _, n := range []int{17, 18, 20, 21} {
		require.Equal(t, "0", sim.value(t, n), "a free gpio-sim line reads its pull, down by default")
	}
	h := gpioHAL(t, "", `
loadrt threads name1=servo period1=1000000
loadrt hal_gpio inputs=GPIO20,GPIO21 outputs=GPIO17,GPIO18 invert=GPIO18 reset=GPIO17
addf hal_gpio.read servo
addf hal_gpio.write servo
`)
	var boom atomic.Bool
	_, err := h.Export("boom", func(time.Duration, int64) {
		if boom.Load() {
			panic("forced fault")
		}
	})
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("boom", "servo", hal.Last))
	assert.Equal(t, []string{"hal_gpio"}, mustThread(t, h, "servo").SafeStates())
	assert.Equal(t, "0", sim.value(t, 17), "an output starts at its safe value")
	assert.Equal(t, "1", sim.value(t, 18), "an inverted output starts high: its pin is FALSE")
	assert.Equal(t, "TRUE", getp(t, h, "hal_gpio.GPIO20-in-not"), "NAME-in-not is TRUE before the first read")
	require.NoError(t, h.Start())

	// Outputs: the pin, through invert=, to the line.
	require.NoError(t, h.SetP("hal_gpio.GPIO17-out", "TRUE"))
	eventually(t, "GPIO17 high", func() bool { return sim.value(t, 17) == "1" })
	require.NoError(t, h.SetP("hal_gpio.GPIO18-out", "TRUE"))
	eventually(t, "GPIO18 low (inverted)", func() bool { return sim.value(t, 18) == "0" })
	require.NoError(t, h.SetP("hal_gpio.GPIO17-out", "FALSE"))
	eventually(t, "GPIO17 low", func() bool { return sim.value(t, 17) == "0" })
	require.NoError(t, h.SetP("hal_gpio.GPIO17-out", "TRUE"))
	eventually(t, "GPIO17 high again", func() bool { return sim.value(t, 17) == "1" })

	// Inputs: the pull, to NAME-in and NAME-in-not; invert= does not apply.
	assert.Equal(t, "FALSE", getp(t, h, "hal_gpio.GPIO20-in"))
	sim.pull(t, 20, "pull-up")
	eventually(t, "GPIO20-in TRUE", func() bool { return getp(t, h, "hal_gpio.GPIO20-in") == "TRUE" })
	assert.Equal(t, "FALSE", getp(t, h, "hal_gpio.GPIO20-in-not"))
	assert.Equal(t, "FALSE", getp(t, h, "hal_gpio.GPIO21-in"))
	sim.pull(t, 21, "pull-up")
	eventually(t, "GPIO21-in TRUE", func() bool { return getp(t, h, "hal_gpio.GPIO21-in") == "TRUE" })
	sim.pull(t, 20, "pull-down")
	eventually(t, "GPIO20-in FALSE", func() bool { return getp(t, h, "hal_gpio.GPIO20-in") == "FALSE" })
	assert.Equal(t, "TRUE", getp(t, h, "hal_gpio.GPIO20-in-not"))

	// A second consumer of a held line is refused, naming the holder.
	h2 := gpioHAL(t, "sim", "")
	err = h2.LoadRT("hal_gpio", "outputs=GPIO17")
	var busy *gpio.BusyError
	require.True(t, errors.As(err, &busy), "%v", err)
	assert.Equal(t, "gortapi", busy.Consumer)
	assert.Equal(t, "GPIO17", busy.Line)
	assert.ErrorIs(t, err, unix.EBUSY)
	assert.Contains(t, err.Error(), `line 17 ("GPIO17") is in use by "gortapi"`)
	t.Logf("second consumer: %v", err)
	require.NoError(t, h2.LoadRT("hal_gpio", "outputs=GPIO19"), "a free line of the same chip loads")

	// A forced fault: the thread's safe state drives every output to its
	// safe value (GPIO17 low, inverted GPIO18 high) and nothing after.
	require.Equal(t, "1", sim.value(t, 17))
	require.Equal(t, "0", sim.value(t, 18))
	boom.Store(true)
	th := mustThread(t, h, "servo")
	select {
	case <-th.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the thread did not fault")
	}
	assert.Error(t, th.Err())
	assert.Equal(t, "0", sim.value(t, 17), "safe state: GPIO17 low")
	assert.Equal(t, "1", sim.value(t, 18), "safe state: inverted GPIO18 high")
	assert.EqualValues(t, 1, th.Stats().SafeStateRuns)

	// Close releases the lines: gpio-sim's value falls back to the pull,
	// and another consumer may take them.
	t.Logf("Close after the fault: %v", h.Close()) // the thread's panic
	assert.Equal(t, "0", sim.value(t, 18), "a released line reads its pull")
	h3 := gpioHAL(t, "sim", "")
	require.NoError(t, h3.LoadRT("hal_gpio", "inputs=GPIO17,GPIO18"), "released lines are free again")
}

func mustThread(t testing.TB, h *hal.HAL, name string) *hal.Thread {
	th, ok := h.Thread(name)
	require.True(t, ok)
	return th
}

func getp(t testing.TB, h *hal.HAL, name string) string {
	v, err := h.GetP(name)
	require.NoError(t, err)
	return v
}

// hal_gpio.read and hal_gpio.write make one ioctl per request and
// allocate nothing, with 1, 8 and 32 lines a direction.
func TestHalGPIOHotPathDoesNotAllocate(t *testing.T) {
	sim := requireGPIOSim(t)
	_ = sim
	for _, n := range []int{1, 8, 32} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			g := loadGPIOLines(t, n)
			assert.Zero(t, testing.AllocsPerRun(1000, func() {
				g.read(time.Millisecond, 0)
				g.writeLines()
			}), "%d lines", n)
		})
	}
}

// loadGPIOLines loads hal_gpio on a sim-flavor HAL with n inputs (GPIO0
// up) and n outputs (GPIO32 up) and returns it.
func loadGPIOLines(t testing.TB, n int) *halGPIO {
	t.Helper()
	var in, out []string
	for i := range n {
		in = append(in, fmt.Sprintf("GPIO%d", i))
		out = append(out, fmt.Sprintf("GPIO%d", 32+i))
	}
	var g *halGPIO
	gpioLoaded = func(l *halGPIO) { g = l }
	defer func() { gpioLoaded = nil }()
	h := gpioHAL(t, "sim", "")
	require.NoError(t, h.LoadRT("hal_gpio", "inputs="+strings.Join(in, ","), "outputs="+strings.Join(out, ",")))
	require.NotNil(t, g)
	t.Cleanup(func() { _ = h.Close() })
	return g
}

// BenchmarkHalGPIOSim times hal_gpio.read and hal_gpio.write on gpio-sim
// lines (docs/BENCHMARKS.md, "hal_gpio").
func BenchmarkHalGPIOSim(b *testing.B) {
	requireGPIOSim(b)
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("read-%d", n), func(b *testing.B) {
			g := loadGPIOLines(b, n)
			for b.Loop() {
				g.read(time.Millisecond, 0)
			}
		})
		b.Run(fmt.Sprintf("write-%d", n), func(b *testing.B) {
			g := loadGPIOLines(b, n)
			for b.Loop() {
				g.writeLines() // write but for its clock read
			}
		})
	}
}

// TestHalGPIOToggle25us runs a 25 µs base thread that toggles GPIO17
// through hal_gpio.write and reads it back from the chip each cycle (an
// output reads what gpio-sim holds): every cycle that ran must have moved
// the line, so the edges seen are the cycles run less one. It logs the
// cycles, the edges and the releases the thread missed (figures for
// docs/BENCHMARKS.md); it asserts no wall-clock figure.
func TestHalGPIOToggle25us(t *testing.T) {
	requireGPIOSim(t)
	rttest.RequireRT(t)
	var g *halGPIO
	gpioLoaded = func(l *halGPIO) { g = l }
	h := gpioHAL(t, "", `
loadrt threads name1=base period1=25000
loadrt hal_gpio outputs=GPIO17
`)
	gpioLoaded = nil
	require.NotNil(t, g)
	pin := g.out[0].pins[0]
	lines := g.out[0].lines
	var cycles, edges, missed, readErrs int64
	last := uint64(2)
	_, err := h.Export("toggle", func(time.Duration, int64) { pin.Set(!pin.Get()) })
	require.NoError(t, err)
	_, err = h.ExportContext("count", func(c *hal.FuncContext) {
		v, err := lines.Get()
		if err != nil {
			readErrs++
			return
		}
		if last != 2 && v != last {
			edges++
		}
		last = v
		cycles++
		missed += c.Missed()
	})
	require.NoError(t, err)
	for _, f := range []string{"toggle", "hal_gpio.write", "count"} {
		require.NoError(t, h.AddFunct(f, "base", hal.Last))
	}
	th := mustThread(t, h, "base")
	require.NoError(t, h.Start())
	const want = 40000 // cycles: a second at 25 µs if none is missed
	eventually(t, "40000 cycles", func() bool { return th.Beat() >= want })
	require.NoError(t, h.Stop())
	st := th.Stats()
	t.Logf("GPIO-TOGGLE period=%v cycles=%d edges=%d missed=%d overruns=%d tmax=%v", th.Period(), cycles, edges, missed, st.Overruns, st.TMax)
	assert.Zero(t, readErrs)
	assert.Equal(t, cycles-1, edges, "each cycle's write reached the chip")
}

// examples/halrun/testdata/gpio-stepper.hal runs on gpio-sim lines named
// as a Raspberry Pi's: steps go out, the limit switch's pull reaches
// stepgen's enable, and stopping leaves the outputs low.
func TestGPIOStepperHalOnGPIOSim(t *testing.T) {
	sim := requireGPIOSim(t)
	rttest.RequireRT(t)
	src, err := os.ReadFile("../../../examples/halrun/testdata/gpio-stepper.hal")
	require.NoError(t, err)
	h := gpioHAL(t, "", string(src))
	require.True(t, h.Running())
	// pullup=GPIO22 pulls gpio-sim's line up: the switch is open.
	eventually(t, "the open switch disables stepgen", func() bool { return getp(t, h, "stepgen.0.enable") == "FALSE" })
	sim.pull(t, 22, "pull-down") // the switch closes, to ground
	eventually(t, "the closed switch enables stepgen", func() bool { return getp(t, h, "stepgen.0.enable") == "TRUE" })
	eventually(t, "steps", func() bool { return getp(t, h, "stepgen.0.counts") != "0" })
	sim.pull(t, 22, "pull-up")
	eventually(t, "the open switch disables stepgen", func() bool { return getp(t, h, "stepgen.0.enable") == "FALSE" })
	require.NoError(t, h.Stop())
	assert.Equal(t, "0", sim.value(t, 17), "step low after stop")
	assert.Equal(t, "0", sim.value(t, 27), "dir low after stop")
}

// hal_gpio.reset, on virtual time with real lines: after write drove
// every output high, reset returns those in reset= to their inactive
// level (low; high when inverted) and leaves the others, and clamps
// reset_ns to a quarter period. The sim clock stands still within the
// cycle, so reset's wait ends on its stalled-clock bound.
func TestHalGPIOResetOnGPIOSim(t *testing.T) {
	sim := requireGPIOSim(t)
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	clock, err := simclock.New(rt)
	require.NoError(t, err)
	cmds, err := halfile.Parse("reset.hal", strings.NewReader(`
loadrt threads name1=base period1=100000
loadrt hal_gpio outputs=GPIO17,GPIO18,GPIO19 invert=GPIO18 reset=GPIO17,GPIO18
addf hal_gpio.write base
setp hal_gpio.GPIO17-out TRUE
setp hal_gpio.GPIO18-out FALSE
setp hal_gpio.GPIO19-out TRUE
setp hal_gpio.reset_ns 999999
`))
	require.NoError(t, err)
	require.NoError(t, h.Load(io.Discard, cmds))
	th := mustThread(t, h, "base")
	require.NoError(t, h.Start())
	require.NoError(t, clock.RunCycles(th.Task(), 1))
	assert.Equal(t, []string{"1", "1", "1"}, []string{sim.value(t, 17), sim.value(t, 18), sim.value(t, 19)}, "write alone")
	require.NoError(t, h.AddFunct("hal_gpio.reset", "base", hal.Last))
	require.NoError(t, clock.RunCycles(th.Task(), 1))
	assert.Equal(t, "0", sim.value(t, 17), "reset: low")
	assert.Equal(t, "1", sim.value(t, 18), "reset and invert: high")
	assert.Equal(t, "1", sim.value(t, 19), "not in reset=: write's value")
	assert.Equal(t, "25000", getp(t, h, "hal_gpio.reset_ns"), "clamped to period/4")
}

// Stop (what halrun and halhost do on SIGINT and SIGTERM before Close)
// runs the thread's safe state while the lines are still held: GPIO17
// goes low and the inverted GPIO18 high, as gpio-sim shows.
func TestHalGPIOStopDrivesSafeValues(t *testing.T) {
	sim := requireGPIOSim(t)
	rttest.RequireRT(t)
	h := gpioHAL(t, "", `
loadrt threads name1=servo period1=1000000
loadrt hal_gpio outputs=GPIO17,GPIO18 invert=GPIO18
addf hal_gpio.write servo
setp hal_gpio.GPIO17-out TRUE
setp hal_gpio.GPIO18-out TRUE
start
`)
	eventually(t, "GPIO17 high, GPIO18 low", func() bool { return sim.value(t, 17) == "1" && sim.value(t, 18) == "0" })
	require.NoError(t, h.Stop())
	assert.Equal(t, "0", sim.value(t, 17))
	assert.Equal(t, "1", sim.value(t, 18))
	assert.Equal(t, "TRUE", getp(t, h, "hal_gpio.GPIO17-out"), "the pin keeps its value; the line is safe")
}

// unloadrt hal_gpio (issue #40) runs its exit hook, as Close does: its
// lines are released (an inverted output held high falls back to its
// pull) and another consumer may take them; its pins are gone.
func TestHalGPIOUnloadrtReleasesTheLines(t *testing.T) {
	sim := requireGPIOSim(t)
	h := gpioHAL(t, "sim", "loadrt hal_gpio outputs=GPIO17,GPIO18 invert=GPIO18\n")
	assert.Equal(t, "1", sim.value(t, 18), "an inverted output starts high: its pin is FALSE")
	h2 := gpioHAL(t, "sim", "")
	var busy *gpio.BusyError
	require.True(t, errors.As(h2.LoadRT("hal_gpio", "outputs=GPIO18"), &busy), "held by the first HAL")

	require.NoError(t, h.UnloadRT("hal_gpio"))
	assert.Equal(t, "0", sim.value(t, 18), "a released line reads its pull")
	_, err := h.GetP("hal_gpio.GPIO17-out")
	assert.Error(t, err, "its pins are gone")
	require.NoError(t, h2.LoadRT("hal_gpio", "outputs=GPIO17,GPIO18"), "released lines are free again")
	require.NoError(t, h.LoadRT("hal_gpio", "inputs=GPIO20"), "and the name loads again")
}
