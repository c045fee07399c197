package gpio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/errs"
)

// Chip is an open GPIO chip, /dev/gpiochipN. Its methods are set-up code,
// not safe for concurrent use.
type Chip struct {
	Path  string // the device opened, e.g. /dev/gpiochip0
	Name  string // the kernel's name, e.g. gpiochip0
	Label string // the driver's label, e.g. pinctrl-bcm2711 or gpio-sim.0-node0
	Lines int    // how many lines the chip has
	fd    int
}

// Open opens the chip at path and reads its name, label and line count.
// A path that is no GPIO chip is an error matching errs.Invalid.
func Open(path string) (*Chip, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("gpio: open %s: %w", path, os.NewSyscallError("open", err))
	}
	var ci chipInfo
	if err := ioctl(fd, getChipInfo, unsafe.Pointer(&ci)); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) {
			return nil, fmt.Errorf("gpio: %s is no GPIO chip (GPIO_GET_CHIPINFO_IOCTL: %w): %w", path, err, errs.Invalid)
		}
		return nil, fmt.Errorf("gpio: %s: GPIO_GET_CHIPINFO_IOCTL: %w", path, err)
	}
	return &Chip{Path: path, Name: cstring(ci.name[:]), Label: cstring(ci.label[:]), Lines: int(ci.lines), fd: fd}, nil
}

// Close closes the chip. Requests made from it stay valid.
func (c *Chip) Close() error {
	if c.fd < 0 {
		return nil
	}
	err := unix.Close(c.fd)
	c.fd = -1
	return os.NewSyscallError("close", err)
}

// LineInfo is what the kernel says of one line (struct gpio_v2_line_info).
type LineInfo struct {
	Offset   int
	Name     string // "" for an unnamed line
	Consumer string // who requested it; "" when free
	Flags    uint64 // FlagUsed, FlagOutput, ...
}

// Used reports whether a consumer holds the line (the kernel's own
// drivers included).
func (l LineInfo) Used() bool { return l.Flags&FlagUsed != 0 }

// LineInfo reads the line at offset.
func (c *Chip) LineInfo(offset int) (LineInfo, error) {
	if offset < 0 || offset >= c.Lines {
		return LineInfo{}, fmt.Errorf("gpio: %s has no line %d (it has %d): %w", c.Name, offset, c.Lines, errs.Invalid)
	}
	li := lineInfo{offset: uint32(offset)}
	if err := ioctl(c.fd, getLineInfo, unsafe.Pointer(&li)); err != nil {
		return LineInfo{}, fmt.Errorf("gpio: %s line %d: GPIO_V2_GET_LINEINFO_IOCTL: %w", c.Name, offset, err)
	}
	return LineInfo{Offset: offset, Name: cstring(li.name[:]), Consumer: cstring(li.consumer[:]), Flags: li.flags}, nil
}

// Names returns the names of the chip's lines, by offset.
func (c *Chip) Names() ([]string, error) {
	out := make([]string, c.Lines)
	for i := range out {
		li, err := c.LineInfo(i)
		if err != nil {
			return nil, err
		}
		out[i] = li.Name
	}
	return out, nil
}

// LineConfig is one line of a request.
type LineConfig struct {
	Offset int
	// Flags are the line's uAPI flags: FlagInput or FlagOutput, and any
	// of FlagOpenDrain, FlagOpenSource, FlagBiasPullUp,
	// FlagBiasPullDown, FlagBiasDisabled.
	Flags uint64
	// Value is an output's value from the moment it is requested.
	Value bool
}

// Request takes the lines for consumer (at most MaxNameSize-1 bytes) and
// returns them as one request. At most MaxLines lines, each once; lines
// with different flags take one configuration attribute per distinct set
// of flags, at most MaxAttrs in all with the output values. A line held
// by another consumer is a *BusyError naming it.
func (c *Chip) Request(consumer string, lines []LineConfig) (*Lines, error) {
	req, err := buildRequest(consumer, lines)
	if err != nil {
		return nil, fmt.Errorf("gpio: %s: %w", c.Name, err)
	}
	if err := ioctl(c.fd, getLine, unsafe.Pointer(req)); err != nil {
		if errors.Is(err, unix.EBUSY) {
			return nil, c.busy(lines, err)
		}
		return nil, fmt.Errorf("gpio: %s: request lines %v: GPIO_V2_GET_LINE_IOCTL: %w", c.Name, offsets(lines), err)
	}
	return &Lines{fd: int(req.fd), n: len(lines), mask: maskOf(len(lines))}, nil
}

// buildRequest fills struct gpio_v2_line_request. Pure.
func buildRequest(consumer string, lines []LineConfig) (*lineRequest, error) {
	if len(lines) == 0 || len(lines) > MaxLines {
		return nil, fmt.Errorf("a request takes 1 to %d lines, not %d: %w", MaxLines, len(lines), errs.Invalid)
	}
	if len(consumer) >= MaxNameSize || strings.IndexByte(consumer, 0) >= 0 {
		return nil, fmt.Errorf("consumer %q: at most %d bytes, no NUL: %w", consumer, MaxNameSize-1, errs.Invalid)
	}
	req := &lineRequest{numLines: uint32(len(lines))}
	copy(req.consumer[:], consumer)
	const known = FlagInput | FlagOutput | FlagOpenDrain | FlagOpenSource | FlagBiasPullUp | FlagBiasPullDown | FlagBiasDisabled
	var sets []uint64 // distinct flag sets, in first-seen order
	var values, outputs uint64
	for i, l := range lines {
		if l.Flags&^known != 0 || (l.Flags&FlagInput != 0) == (l.Flags&FlagOutput != 0) {
			return nil, fmt.Errorf("line %d: flags %#x: want FlagInput or FlagOutput and bias or drive flags: %w", l.Offset, l.Flags, errs.Invalid)
		}
		if l.Offset < 0 || slices.ContainsFunc(lines[:i], func(o LineConfig) bool { return o.Offset == l.Offset }) {
			return nil, fmt.Errorf("line %d: a bad or repeated offset: %w", l.Offset, errs.Invalid)
		}
		req.offsets[i] = uint32(l.Offset)
		if !slices.Contains(sets, l.Flags) {
			sets = append(sets, l.Flags)
		}
		if l.Flags&FlagOutput != 0 {
			outputs |= 1 << i
			if l.Value {
				values |= 1 << i
			}
		}
	}
	// The first set is the request's default; each other set is an
	// attribute over its lines.
	cfg := &req.config
	cfg.flags = sets[0]
	attrs := len(sets) - 1
	if outputs != 0 {
		attrs++
	}
	if attrs > MaxAttrs {
		return nil, fmt.Errorf("%d distinct line configurations, at most %d: %w", attrs, MaxAttrs, errs.Invalid)
	}
	for _, set := range sets[1:] {
		a := &cfg.attrs[cfg.numAttrs]
		a.attr.id = attrFlags
		a.attr.value = set
		for i, l := range lines {
			if l.Flags == set {
				a.mask |= 1 << i
			}
		}
		cfg.numAttrs++
	}
	if outputs != 0 {
		a := &cfg.attrs[cfg.numAttrs]
		a.attr.id = attrOutputValues
		a.attr.value = values
		a.mask = outputs
		cfg.numAttrs++
	}
	return req, nil
}

// busy makes the error for a refused request: the first of the lines a
// consumer holds, and who.
func (c *Chip) busy(lines []LineConfig, err error) error {
	for _, l := range lines {
		if li, ierr := c.LineInfo(l.Offset); ierr == nil && li.Used() {
			return &BusyError{Chip: c.Name, Offset: l.Offset, Line: li.Name, Consumer: li.Consumer, Err: err}
		}
	}
	return &BusyError{Chip: c.Name, Offset: -1, Err: err}
}

// BusyError is a request refused because a line is in use. It matches
// errs.Busy and the kernel's EBUSY.
type BusyError struct {
	Chip     string
	Offset   int    // the line held, -1 when the kernel's line info named none
	Line     string // its name
	Consumer string // who holds it, as the kernel records it ("" when unnamed)
	Err      error
}

func (e *BusyError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("gpio: %s: a line is in use: %v", e.Chip, e.Err)
	}
	who := strconv.Quote(e.Consumer)
	if e.Consumer == "" {
		who = "an unnamed consumer (a kernel driver or a request without a label)"
	}
	return fmt.Sprintf("gpio: %s line %d (%q) is in use by %s: %v", e.Chip, e.Offset, e.Line, who, e.Err)
}

func (e *BusyError) Unwrap() []error { return []error{e.Err, errs.Busy} }

func offsets(lines []LineConfig) []int {
	out := make([]int, len(lines))
	for i, l := range lines {
		out[i] = l.Offset
	}
	return out
}

func maskOf(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// Chips lists the GPIO chip devices in dev (usually /dev): the character
// devices named gpiochipN, not symbolic links (a Raspberry Pi 5 has
// gpiochip4 -> gpiochip0), sorted by N.
func Chips(dev string) ([]string, error) {
	ents, err := os.ReadDir(dev)
	if err != nil {
		return nil, fmt.Errorf("gpio: list GPIO chips: %w", err)
	}
	type chip struct {
		n    int
		path string
	}
	var found []chip
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), "gpiochip")
		num, err := strconv.Atoi(n)
		if !ok || err != nil || num < 0 || e.Type()&os.ModeCharDevice == 0 {
			continue // a symlink reports ModeSymlink, a plain file no mode bit
		}
		found = append(found, chip{num, filepath.Join(dev, e.Name())})
	}
	slices.SortFunc(found, func(a, b chip) int { return a.n - b.n })
	out := make([]string, len(found))
	for i, c := range found {
		out[i] = c.path
	}
	return out, nil
}
