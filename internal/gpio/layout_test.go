package gpio

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The uAPI's sizes and offsets, from include/uapi/linux/gpio.h (Linux
// 6.12), the same on every architecture: the header uses __aligned_u64
// and explicit padding so that 32- and 64-bit ABIs agree. The ioctl
// numbers are those the kernel's _IOR/_IOWR give on asm-generic
// architectures (amd64, 386, arm, arm64, riscv64); CI runs this on each.
func TestGPIOLayoutsMatchKernel(t *testing.T) {
	t.Parallel()
	assert.EqualValues(t, 68, unsafe.Sizeof(chipInfo{}), "sizeof(struct gpiochip_info)")
	assert.EqualValues(t, 16, unsafe.Sizeof(lineValues{}), "sizeof(struct gpio_v2_line_values)")
	assert.EqualValues(t, 8, unsafe.Offsetof(lineValues{}.mask))
	assert.EqualValues(t, 16, unsafe.Sizeof(lineAttribute{}), "sizeof(struct gpio_v2_line_attribute)")
	assert.EqualValues(t, 8, unsafe.Offsetof(lineAttribute{}.value))
	assert.EqualValues(t, 24, unsafe.Sizeof(lineConfigAttribute{}), "sizeof(struct gpio_v2_line_config_attribute)")
	assert.EqualValues(t, 16, unsafe.Offsetof(lineConfigAttribute{}.mask))
	assert.EqualValues(t, 272, unsafe.Sizeof(lineConfig{}), "sizeof(struct gpio_v2_line_config)")
	assert.EqualValues(t, 8, unsafe.Offsetof(lineConfig{}.numAttrs))
	assert.EqualValues(t, 32, unsafe.Offsetof(lineConfig{}.attrs))
	assert.EqualValues(t, 592, unsafe.Sizeof(lineRequest{}), "sizeof(struct gpio_v2_line_request)")
	assert.EqualValues(t, 256, unsafe.Offsetof(lineRequest{}.consumer))
	assert.EqualValues(t, 288, unsafe.Offsetof(lineRequest{}.config))
	assert.EqualValues(t, 560, unsafe.Offsetof(lineRequest{}.numLines))
	assert.EqualValues(t, 564, unsafe.Offsetof(lineRequest{}.eventBufferSize))
	assert.EqualValues(t, 588, unsafe.Offsetof(lineRequest{}.fd))
	assert.EqualValues(t, 256, unsafe.Sizeof(lineInfo{}), "sizeof(struct gpio_v2_line_info)")
	assert.EqualValues(t, 32, unsafe.Offsetof(lineInfo{}.consumer))
	assert.EqualValues(t, 64, unsafe.Offsetof(lineInfo{}.offset))
	assert.EqualValues(t, 72, unsafe.Offsetof(lineInfo{}.flags))
	assert.EqualValues(t, 80, unsafe.Offsetof(lineInfo{}.attrs))
	assert.EqualValues(t, 240, unsafe.Offsetof(lineInfo{}.padding))

	assert.EqualValues(t, uint32(0x8044B401), getChipInfo, "GPIO_GET_CHIPINFO_IOCTL")
	assert.EqualValues(t, uint32(0xC100B405), getLineInfo, "GPIO_V2_GET_LINEINFO_IOCTL")
	assert.EqualValues(t, uint32(0xC250B407), getLine, "GPIO_V2_GET_LINE_IOCTL")
	assert.EqualValues(t, uint32(0xC010B40E), lineGetValues, "GPIO_V2_LINE_GET_VALUES_IOCTL")
	assert.EqualValues(t, uint32(0xC010B40F), lineSetValues, "GPIO_V2_LINE_SET_VALUES_IOCTL")
}
