package gpio

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/errs"
)

func TestBuildRequest(t *testing.T) {
	t.Parallel()
	in, out := FlagInput, FlagOutput
	req, err := buildRequest("gortapi", []LineConfig{
		{Offset: 4, Flags: out, Value: true},
		{Offset: 2, Flags: in | FlagBiasPullUp},
		{Offset: 7, Flags: out},
		{Offset: 9, Flags: in | FlagBiasPullUp},
		{Offset: 1, Flags: out | FlagOpenDrain, Value: true},
	})
	require.NoError(t, err)
	assert.Equal(t, "gortapi", cstring(req.consumer[:]))
	assert.EqualValues(t, 5, req.numLines)
	assert.Equal(t, []uint32{4, 2, 7, 9, 1}, req.offsets[:5])
	cfg := req.config
	assert.Equal(t, out, cfg.flags, "the first line's flags are the default")
	require.EqualValues(t, 3, cfg.numAttrs)
	assert.Equal(t, lineConfigAttribute{attr: lineAttribute{id: attrFlags, value: in | FlagBiasPullUp}, mask: 0b01010}, cfg.attrs[0])
	assert.Equal(t, lineConfigAttribute{attr: lineAttribute{id: attrFlags, value: out | FlagOpenDrain}, mask: 0b10000}, cfg.attrs[1])
	assert.Equal(t, lineConfigAttribute{attr: lineAttribute{id: attrOutputValues, value: 0b10001}, mask: 0b10101}, cfg.attrs[2])

	req, err = buildRequest("x", []LineConfig{{Offset: 0, Flags: in}})
	require.NoError(t, err)
	assert.Zero(t, req.config.numAttrs, "inputs of one kind need no attribute")
}

func TestBuildRequestRefuses(t *testing.T) {
	t.Parallel()
	many := make([]LineConfig, MaxLines+1)
	for i := range many {
		many[i] = LineConfig{Offset: i, Flags: FlagInput}
	}
	kinds := make([]LineConfig, 11)
	for i := range kinds {
		kinds[i] = LineConfig{Offset: i, Flags: FlagInput}
		if i&1 != 0 {
			kinds[i].Flags |= FlagBiasPullUp
		}
		if i&2 != 0 {
			kinds[i].Flags |= FlagBiasDisabled
		}
		if i&4 != 0 {
			kinds[i].Flags = FlagOutput | kinds[i].Flags&^FlagInput
		}
		if i&8 != 0 {
			kinds[i].Flags |= FlagOpenDrain | FlagOutput
			kinds[i].Flags &^= FlagInput
		}
	}
	for name, tc := range map[string]struct {
		consumer string
		lines    []LineConfig
	}{
		"no lines":           {"c", nil},
		"65 lines":           {"c", many},
		"long consumer":      {"a consumer name of thirty-two by", []LineConfig{{Flags: FlagInput}}},
		"NUL in consumer":    {"a\x00b", []LineConfig{{Flags: FlagInput}}},
		"neither in nor out": {"c", []LineConfig{{Flags: FlagBiasPullUp}}},
		"both in and out":    {"c", []LineConfig{{Flags: FlagInput | FlagOutput}}},
		"unknown flag":       {"c", []LineConfig{{Flags: FlagInput | FlagEdgeRising}}},
		"repeated offset":    {"c", []LineConfig{{Offset: 3, Flags: FlagInput}, {Offset: 3, Flags: FlagInput}}},
		"negative offset":    {"c", []LineConfig{{Offset: -1, Flags: FlagInput}}},
		"too many kinds":     {"c", kinds},
	} {
		_, err := buildRequest(tc.consumer, tc.lines)
		assert.ErrorIs(t, err, errs.Invalid, name)
	}
}

func TestBusyErrorNamesTheConsumer(t *testing.T) {
	t.Parallel()
	err := error(&BusyError{Chip: "gpiochip0", Offset: 17, Line: "GPIO17", Consumer: "gortapi", Err: unix.EBUSY})
	assert.Equal(t, `gpio: gpiochip0 line 17 ("GPIO17") is in use by "gortapi": device or resource busy`, err.Error())
	assert.ErrorIs(t, err, unix.EBUSY)
	assert.ErrorIs(t, err, errs.Busy)
	var be *BusyError
	assert.True(t, errors.As(err, &be))
	err = &BusyError{Chip: "gpiochip0", Offset: 3, Line: "LED", Err: unix.EBUSY}
	assert.Contains(t, err.Error(), "an unnamed consumer")
}

func TestMaskOf(t *testing.T) {
	t.Parallel()
	assert.EqualValues(t, 1, maskOf(1))
	assert.EqualValues(t, 0xff, maskOf(8))
	assert.Equal(t, ^uint64(0), maskOf(64))
}

func TestClosedLinesRefuseWithoutAllocating(t *testing.T) {
	l := &Lines{fd: -1, n: 1, mask: 1}
	_, err := l.Get()
	assert.ErrorIs(t, err, unix.EBADF)
	assert.ErrorIs(t, l.Set(1, 1), unix.EBADF)
	assert.ErrorIs(t, l.Close(), errs.Closed)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_, _ = l.Get()
		_ = l.Set(1, 1)
	}))
}

// Get and Set make their ioctl and return its error without allocating;
// /dev/null refuses the GPIO ioctls (ENOTTY), which exercises the whole
// call. The guest lane proves it on gpio-sim lines too.
func TestGetSetDoNotAllocate(t *testing.T) {
	fd, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	l := &Lines{fd: fd, n: 8, mask: maskOf(8)}
	t.Cleanup(func() { l.Close() })
	_, err = l.Get()
	assertRefusedIoctl(t, err)
	assertRefusedIoctl(t, l.Set(0xff, 0xff))
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_, _ = l.Get()
		_ = l.Set(0x5a, 0xff)
	}))
}

// Open refuses a file that is no GPIO chip.
func TestOpenRefusesANonChip(t *testing.T) {
	t.Parallel()
	_, err := Open("/dev/null")
	if !errors.Is(err, unix.ENOSYS) { // see assertRefusedIoctl
		assert.ErrorIs(t, err, errs.Invalid)
	}
	_, err = Open("/nonexistent/gpiochip0")
	assert.ErrorIs(t, err, unix.ENOENT)
}

// Chips lists character devices named gpiochipN, by N, and no other file.
func TestChipsListsNothingElse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"gpiochip0", "gpiochipX", "ttyS0"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	require.NoError(t, os.Symlink("gpiochip0", filepath.Join(dir, "gpiochip4")))
	chips, err := Chips(dir)
	require.NoError(t, err)
	assert.Empty(t, chips, "plain files and links are no chips")
	_, err = Chips(filepath.Join(dir, "missing"))
	assert.Error(t, err)
}

// assertRefusedIoctl checks /dev/null's answer to a GPIO ioctl: ENOTTY
// from a kernel; ENOSYS from qemu-user (CI's arm lane), which passes no
// ioctl it does not know to the kernel.
func assertRefusedIoctl(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, unix.ENOSYS) {
		assert.ErrorIs(t, err, unix.ENOTTY)
	}
}
