package gpio

import "unsafe"

// The uAPI's limits (include/uapi/linux/gpio.h).
const (
	// MaxNameSize is GPIO_MAX_NAME_SIZE: chip, line and consumer names
	// hold at most 31 bytes and a NUL.
	MaxNameSize = 32
	// MaxLines is GPIO_V2_LINES_MAX: the most lines one request holds.
	MaxLines = 64
	// MaxAttrs is GPIO_V2_LINE_NUM_ATTRS_MAX: the most per-line
	// attributes one request's configuration holds.
	MaxAttrs = 10
)

// Line flags (enum gpio_v2_line_flag).
const (
	FlagUsed         uint64 = 1 << 0
	FlagActiveLow    uint64 = 1 << 1
	FlagInput        uint64 = 1 << 2
	FlagOutput       uint64 = 1 << 3
	FlagEdgeRising   uint64 = 1 << 4
	FlagEdgeFalling  uint64 = 1 << 5
	FlagOpenDrain    uint64 = 1 << 6
	FlagOpenSource   uint64 = 1 << 7
	FlagBiasPullUp   uint64 = 1 << 8
	FlagBiasPullDown uint64 = 1 << 9
	FlagBiasDisabled uint64 = 1 << 10
)

// Attribute ids (enum gpio_v2_line_attr_id).
const (
	attrFlags        = 1
	attrOutputValues = 2
)

// chipInfo is struct gpiochip_info.
type chipInfo struct {
	name  [MaxNameSize]byte
	label [MaxNameSize]byte
	lines uint32
}

// lineValues is struct gpio_v2_line_values: bit i of bits is the value of
// the request's line i, for each i set in mask.
type lineValues struct {
	bits uint64
	mask uint64
}

// lineAttribute is struct gpio_v2_line_attribute; value is the union of
// flags, values and debounce_period_us.
type lineAttribute struct {
	id      uint32
	padding uint32
	value   uint64
}

// lineConfigAttribute is struct gpio_v2_line_config_attribute.
type lineConfigAttribute struct {
	attr lineAttribute
	mask uint64
}

// lineConfig is struct gpio_v2_line_config.
type lineConfig struct {
	flags    uint64
	numAttrs uint32
	padding  [5]uint32
	attrs    [MaxAttrs]lineConfigAttribute
}

// lineRequest is struct gpio_v2_line_request.
type lineRequest struct {
	offsets         [MaxLines]uint32
	consumer        [MaxNameSize]byte
	config          lineConfig
	numLines        uint32
	eventBufferSize uint32
	padding         [5]uint32
	fd              int32
}

// lineInfo is struct gpio_v2_line_info.
type lineInfo struct {
	name     [MaxNameSize]byte
	consumer [MaxNameSize]byte
	offset   uint32
	numAttrs uint32
	flags    uint64
	attrs    [MaxAttrs]lineAttribute
	padding  [4]uint32
}

// ioc is the kernel's _IOC(dir, type, nr, size) of asm-generic/ioctl.h,
// which every architecture Go supports on Linux but mips, ppc and sparc
// uses (layout_test.go pins the numbers).
func ioc(dir, typ, nr, size uintptr) uintptr { return dir<<30 | size<<16 | typ<<8 | nr }

const (
	iocWrite = 1
	iocRead  = 2
	gpioType = 0xB4
)

// The ioctl requests gortapi uses.
var (
	getChipInfo   = ioc(iocRead, gpioType, 0x01, unsafe.Sizeof(chipInfo{}))
	getLineInfo   = ioc(iocRead|iocWrite, gpioType, 0x05, unsafe.Sizeof(lineInfo{}))
	getLine       = ioc(iocRead|iocWrite, gpioType, 0x07, unsafe.Sizeof(lineRequest{}))
	lineGetValues = ioc(iocRead|iocWrite, gpioType, 0x0E, unsafe.Sizeof(lineValues{}))
	lineSetValues = ioc(iocRead|iocWrite, gpioType, 0x0F, unsafe.Sizeof(lineValues{}))
)

// cstring is a NUL-terminated name field as a string.
func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
