package kerneldetect

import "strings"

// NextSteps returns what to do next on this machine, cheapest first: fix
// the failed checks, switch a PREEMPT_DYNAMIC kernel to full preemption at
// boot, thread the interrupt handlers, install the distribution's
// real-time kernel, or, on a ready machine, measure. It never returns an
// empty list. It reads only the report.
func (r *Report) NextSteps() []string {
	if r == nil || r.Kind == Unknown {
		return []string{"the kernel could not be identified: run rtcheck on the machine itself, or rtcheck -capture FILE.tar.gz there and rtcheck -root FILE.tar.gz here"}
	}
	var steps []string
	var failed []string
	for _, c := range r.Checks {
		if c.Status == StatusFail {
			failed = append(failed, c.ID)
		}
	}
	if len(failed) > 0 {
		steps = append(steps, "fix the failed checks ("+strings.Join(failed, ", ")+"): each names its remedy below")
	}
	if r.Kind.IsRealtime() {
		if len(failed) == 0 {
			steps = append(steps, "measure the worst-case latency under load: latency-test -p 80 -D 10m (or cyclictest) beside stress-ng")
		}
		return steps
	}
	p := r.Preempt
	if p.Dynamic && (p.Effective() == ModelNone || p.Effective() == ModelVoluntary) {
		s := "boot with preempt=full on the kernel command line: this PREEMPT_DYNAMIC kernel then preempts fully, no new kernel needed"
		if p.Source == "sys/kernel/debug/sched/preempt" {
			s += " (or now, as root: echo full > /sys/kernel/debug/sched/preempt)"
		}
		steps = append(steps, s)
	}
	if r.ThreadedIRQs.Value != "yes" {
		steps = append(steps, "boot with threadirqs, so interrupt handlers run in threads a real-time task can outrank")
	}
	steps = append(steps, "for hard real time, "+rtKernelStep(r.Distro))
	return steps
}

// rtKernelStep names the real-time kernel package of the distribution d.
func rtKernelStep(d Distro) string {
	switch {
	case d.Is("ubuntu"):
		return "install Ubuntu Pro's real-time kernel (sudo pro attach; sudo pro enable realtime-kernel) and reboot into it"
	case d.Is("debian") && d.Arch != "" && d.ArchFromRelease:
		return "install Debian's PREEMPT_RT kernel (sudo apt install linux-image-rt-" + d.Arch + ") and reboot into it"
	case d.Is("debian"):
		return "install a PREEMPT_RT kernel: Debian's linux-image-rt-<arch> (apt search linux-image-rt) for a Debian kernel, else the board vendor's real-time build"
	}
	return "install a PREEMPT_RT kernel (your distribution's real-time kernel package, or mainline >= 6.12 built with CONFIG_PREEMPT_RT=y), or Xenomai"
}
