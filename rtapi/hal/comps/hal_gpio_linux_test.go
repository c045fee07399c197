package comps

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/gpio"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// With no lines, hal_gpio loads anywhere, as hal_gpio.c does: functions
// read and write, no pin, and no reset function or reset_ns parameter.
func TestHalGPIONoLines(t *testing.T) {
	h := gpioHAL(t, "sim", "")
	require.NoError(t, h.LoadRT("hal_gpio"))
	_, ok := h.Funct("hal_gpio.read")
	assert.True(t, ok)
	_, ok = h.Funct("hal_gpio.write")
	assert.True(t, ok)
	_, ok = h.Funct("hal_gpio.reset")
	assert.False(t, ok)
	_, err := h.GetP("hal_gpio.reset_ns")
	assert.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.Error(t, h.LoadRT("hal_gpio"), "one hal_gpio per HAL, as hal_init refuses a second")
}

// A line no chip has is refused with its name (hal_gpio.c's libgpiod 2
// build ignores it and makes no pin); so are a bad list and an unknown
// argument.
func TestHalGPIORefuses(t *testing.T) {
	old := gpioDev
	gpioDev = t.TempDir()
	t.Cleanup(func() { gpioDev = old })
	h := gpioHAL(t, "sim", "")
	err := h.LoadRT("hal_gpio", "inputs=GPIO17")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.Contains(t, err.Error(), `no GPIO line is named "GPIO17"`)
	err = h.LoadRT("hal_gpio", "outputs=GPIO4,,GPIO5")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.Contains(t, err.Error(), "an empty name")
	many := make([]string, gpioMaxChan+1)
	for i := range many {
		many[i] = fmt.Sprintf("L%d", i)
	}
	err = h.LoadRT("hal_gpio", "invert="+strings.Join(many, ","))
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	assert.Contains(t, err.Error(), "can only take 128 arguments")
	require.ErrorIs(t, h.LoadRT("hal_gpio", "drive=GPIO4"), rtapi.ErrInvalid)
	require.NoError(t, h.LoadRT("hal_gpio"), "each refusal left nothing behind")
}

func TestGPIOKernelFlags(t *testing.T) {
	t.Parallel()
	assert.Equal(t, gpio.FlagInput, gpioKernelFlags(gpioInvert|gpioReset, false))
	assert.Equal(t, gpio.FlagOutput, gpioKernelFlags(0, true))
	assert.Equal(t, gpio.FlagInput|gpio.FlagBiasPullUp, gpioKernelFlags(gpioPullUp, false))
	assert.Equal(t, gpio.FlagOutput|gpio.FlagOpenDrain|gpio.FlagBiasPullDown, gpioKernelFlags(gpioOpenDrain|gpioPullDown, true))
	assert.Equal(t, gpio.FlagOutput|gpio.FlagOpenSource|gpio.FlagBiasDisabled, gpioKernelFlags(gpioOpenSource|gpioBiasDisable, true))
}

// With no lines, read, write and reset's loops run empty: the component's
// own bookkeeping allocates nothing (the ioctls are proved in the guest,
// TestHalGPIOHotPathDoesNotAllocate).
func TestHalGPIOEmptyHotPathDoesNotAllocate(t *testing.T) {
	g := &halGPIO{}
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		g.read(time.Millisecond, 0)
		g.writeLines()
	}))
}

// The example parses; the guest lane runs it (TestGPIOStepperHalOnGPIOSim).
func TestGPIOStepperHalParses(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../../examples/halrun/testdata/gpio-stepper.hal")
	require.NoError(t, err)
	cmds, err := halfile.Parse("gpio-stepper.hal", strings.NewReader(string(src)))
	require.NoError(t, err)
	assert.NotEmpty(t, cmds)
}
