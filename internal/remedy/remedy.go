// Package remedy holds the remedies several packages print, so that all
// name one group and one file.
package remedy

// Group is the group granted real-time limits and /dev/cpu_dma_latency,
// as in Debian and most guides.
const Group = "realtime"

// LimitsFile is the limits.d file the remedies name, and LimitsRTPrio and
// LimitsMemlock its two lines.
const (
	LimitsFile    = "/etc/security/limits.d/99-realtime.conf"
	LimitsRTPrio  = "@" + Group + " - rtprio 99"
	LimitsMemlock = "@" + Group + " - memlock unlimited"
)

// UdevDMALatency is the udev rule that lets Group hold
// /dev/cpu_dma_latency, and UdevFile where it goes.
const (
	UdevDMALatency = `KERNEL=="cpu_dma_latency", GROUP="` + Group + `", MODE="0660"`
	UdevFile       = "/etc/udev/rules.d/99-cpu-dma-latency.rules"
)

// DMALatency is the remedy for a /dev/cpu_dma_latency the user cannot open.
const DMALatency = "a udev rule lets the " + Group + " group hold it: " + UdevDMALatency + " in " + UdevFile +
	" (then udevadm trigger, and add the user to " + Group + "); or run as root"
