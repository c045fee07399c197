// Package remedy holds the remedies that several packages print, so that
// rtcheck, the flavors' warnings and the tools name one group and one
// file everywhere.
package remedy

// Group is the group that /etc/security/limits.d grants real-time
// limits to and that a udev rule lets open /dev/cpu_dma_latency: Debian's
// and most guides' "realtime".
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

// DMALatency is the whole remedy for a /dev/cpu_dma_latency the user
// cannot open.
const DMALatency = "a udev rule lets the " + Group + " group hold it: " + UdevDMALatency + " in " + UdevFile +
	" (then udevadm trigger, and add the user to " + Group + "); or run as root"
