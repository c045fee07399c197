// Package gpio drives Linux GPIO lines through the GPIO character device,
// uAPI v2 (include/uapi/linux/gpio.h): a chip is /dev/gpiochipN, a
// request of up to 64 of its lines is a file descriptor, and one ioctl
// reads or writes all of a request's lines at once.
//
// Open and Chip.Request are set-up code: they allocate and may block.
// Lines.Get and Lines.Set are one ioctl each, allocate nothing, take no
// lock and are RT-safe.
//
// The ioctl structures are declared here with the kernel's layout, which
// is the same on every architecture Go supports on Linux (each 64-bit
// field sits at an 8-aligned offset, so Go's 4-byte alignment of uint64
// on 386 and arm changes nothing); layout_test.go checks it on each.
// The ioctls build on Linux only.
package gpio
