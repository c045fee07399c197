package kerneldetect

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gortapi/gortapi/internal/remedy"
)

// Remedies shared by several checks.
const (
	remedyCaps = "grant the binary the capabilities: setcap cap_sys_nice,cap_ipc_lock+ep BINARY; " +
		"or raise the limits in " + remedy.LimitsFile + " (\"" + remedy.LimitsRTPrio + "\", " +
		"\"" + remedy.LimitsMemlock + "\") and add the user to that group; " +
		"in docker: --cap-add=SYS_NICE --ulimit rtprio=99 --ulimit memlock=-1"
	remedyIsol = "reserve CPUs for real-time threads on the kernel command line: isolcpus=N nohz_full=N rcu_nocbs=N irqaffinity=<other CPUs>"
)

func (d *detector) checks() {
	d.r.Checks = []Check{
		d.checkSchedFIFO(),
		d.checkMemlock(),
		d.checkRTThrottling(),
		d.checkRTGroupSched(),
		d.checkIsolated(),
		d.checkNohzFull(),
		d.checkGovernor(),
		d.checkSMT(),
		d.checkHypervisor(),
		d.checkClocksource(),
		d.checkHRTimers(),
		d.checkHZ(),
		d.checkDMALatency(),
		d.checkTracefs(),
	}
}

func ok(id, evidence string) Check { return Check{ID: id, Status: StatusOK, Evidence: evidence} }

func warn(id, evidence, remedy string) Check {
	return Check{ID: id, Status: StatusWarn, Evidence: evidence, Remedy: remedy}
}

func fail(id, evidence, remedy string) Check {
	return Check{ID: id, Status: StatusFail, Evidence: evidence, Remedy: remedy}
}

func (d *detector) checkSchedFIFO() Check {
	p := d.r.Process
	ev := fmt.Sprintf("proc/self/status CapEff=%s (CAP_SYS_NICE %s); proc/self/limits rtprio %s",
		capString(p), yesNo(p.HasCap(CapSysNice), p.CapEffKnown), limitString(p.RTPrio))
	switch {
	case p.HasCap(CapSysNice):
		return ok(CheckSchedFIFO, ev)
	case p.RTPrio.Known && (p.RTPrio.Soft == Unlimited || p.RTPrio.Soft > 0):
		return ok(CheckSchedFIFO, ev)
	case p.CapEffKnown && p.RTPrio.Known:
		return fail(CheckSchedFIFO, ev+": SCHED_FIFO will fail with EPERM", remedyCaps)
	default:
		return warn(CheckSchedFIFO, ev+": could not tell", remedyCaps)
	}
}

func (d *detector) checkMemlock() Check {
	p := d.r.Process
	ev := fmt.Sprintf("proc/self/status CapEff=%s (CAP_IPC_LOCK %s); proc/self/limits memlock %s",
		capString(p), yesNo(p.HasCap(CapIPCLock), p.CapEffKnown), limitString(p.Memlock))
	switch {
	case p.HasCap(CapIPCLock), p.Memlock.Known && p.Memlock.Soft == Unlimited:
		return ok(CheckMemlock, ev)
	case p.Memlock.Known:
		return warn(CheckMemlock, ev+": mlockall(MCL_FUTURE) makes heap growth past the limit fatal", remedyCaps)
	default:
		return warn(CheckMemlock, ev+": could not tell", remedyCaps)
	}
}

func (d *detector) checkRTThrottling() Check {
	const rt, per = "proc/sys/kernel/sched_rt_runtime_us", "proc/sys/kernel/sched_rt_period_us"
	rb, err := d.readQuiet(rt)
	if err != nil {
		return warn(CheckRTThrottling, rt+": "+describeErr(err), "")
	}
	runtime, err := parseSingleInt(rb)
	if err != nil {
		return warn(CheckRTThrottling, rt+": "+err.Error(), "")
	}
	period := int64(1000000)
	if pb, err := d.readQuiet(per); err == nil {
		if v, err := parseSingleInt(pb); err == nil && v > 0 {
			period = v
		}
	}
	ev := fmt.Sprintf("%s=%d, %s=%d", rt, runtime, per, period)
	switch {
	case runtime < 0:
		return ok(CheckRTThrottling, ev+": no RT throttling (a runaway SCHED_FIFO thread can hang its CPU)")
	case runtime == 0:
		return fail(CheckRTThrottling, ev+": RT tasks get no CPU time at all",
			"echo 950000 > /proc/sys/kernel/sched_rt_runtime_us (or sysctl kernel.sched_rt_runtime_us=950000)")
	case runtime*2 < period:
		return warn(CheckRTThrottling, ev+": RT tasks are throttled to less than half of each period",
			"sysctl kernel.sched_rt_runtime_us=950000")
	default:
		return ok(CheckRTThrottling, ev+": RT tasks throttled only after "+fmt.Sprint(runtime)+" µs of each period")
	}
}

func (d *detector) checkRTGroupSched() Check {
	const cg = "proc/self/cgroup"
	b, err := d.readQuiet(cg)
	if err != nil {
		return warn(CheckRTGroupSched, cg+": "+describeErr(err), "")
	}
	cfg := ""
	if d.cfg != nil {
		cfg = "; CONFIG_RT_GROUP_SCHED=" + orAbsent(d.cfg["CONFIG_RT_GROUP_SCHED"])
	}
	cgPath, controllers, found := cgroupV1Path(b, "cpu")
	if !found {
		return ok(CheckRTGroupSched, cg+": no cgroup-v1 cpu hierarchy, no per-group RT budget"+cfg)
	}
	rel := strings.TrimPrefix(path.Clean("/"+cgPath), "/")
	var tried []string
	// A container sees its own cgroup at the root of the mount (a cgroup
	// namespace, or the runtime's bind mount), under a path that
	// /proc/self/cgroup may still name from the host's root.
	subs := []string{rel}
	if rel != "" {
		subs = append(subs, "")
	}
	for _, sub := range subs {
		for _, mount := range []string{controllers, "cpu", "cpu,cpuacct", "cpuacct,cpu"} {
			name := path.Join("sys/fs/cgroup", mount, sub, "cpu.rt_runtime_us")
			if !fsValid(name) || slices.Contains(tried, name) {
				continue
			}
			tried = append(tried, name)
			vb, err := d.readQuiet(name)
			if err != nil {
				continue
			}
			v, err := parseSingleInt(vb)
			if err != nil {
				return warn(CheckRTGroupSched, name+": "+err.Error(), "")
			}
			where := ""
			if sub != rel {
				where = " (the mount's root: a container's own cgroup)"
			}
			ev := fmt.Sprintf("%s: cpu cgroup %q; %s=%d%s%s", cg, cgPath, name, v, where, cfg)
			d.note(name, fmt.Sprint(v), "RT budget of this process's cpu cgroup"+where)
			if v == 0 {
				return fail(CheckRTGroupSched, ev+": RT group scheduling leaves this cgroup no RT budget, so SCHED_FIFO fails with EPERM even as root",
					"give the cgroup an RT budget: docker run --cpu-rt-runtime=950000 --ulimit rtprio=99 (dockerd needs --cpu-rt-runtime too), "+
						"or echo 950000 > "+"/"+name+" (its parents first), or run the process in the root cpu cgroup")
			}
			return ok(CheckRTGroupSched, ev)
		}
	}
	return ok(CheckRTGroupSched, fmt.Sprintf("%s: cpu cgroup %q, no cpu.rt_runtime_us (%s)%s", cg, cgPath, strings.Join(tried, ", "), cfg))
}

func fsValid(name string) bool { return name != "" && !strings.Contains(name, "..") }

func (d *detector) checkIsolated() Check {
	const f = "sys/devices/system/cpu/isolated"
	if len(d.r.IsolatedCPUs) > 0 {
		return ok(CheckIsolatedCPUs, f+"="+formatCPUList(d.r.IsolatedCPUs))
	}
	ev := f + " empty or unreadable"
	if raw, _ := cmdlineValue(d.cmdline, "isolcpus"); d.hasIso && !d.iso.domain && len(d.iso.cpus) > 0 {
		// Flags given without domain: the CPUs stay in the scheduler's
		// load balancing, which is what sysfs reports.
		return warn(CheckIsolatedCPUs, ev+"; isolcpus="+truncate(raw, 60)+" isolates CPUs "+formatCPUList(d.iso.cpus)+
			" from "+d.iso.flags()+" only, not from the scheduler: real-time threads share those CPUs with everything else",
			"add the domain flag: isolcpus=domain,"+truncate(raw, 60))
	} else if d.hasIso {
		ev += "; isolcpus=" + truncate(raw, 60) + " on the command line not applied (CONFIG_CPU_ISOLATION off?)"
	}
	return warn(CheckIsolatedCPUs, ev+": real-time threads share CPUs with everything else", remedyIsol)
}

func (d *detector) checkNohzFull() Check {
	const f = "sys/devices/system/cpu/nohz_full"
	if len(d.r.NohzFull) > 0 {
		return ok(CheckNohzFull, f+"="+formatCPUList(d.r.NohzFull))
	}
	ev := f + " empty or missing"
	if d.cfg != nil {
		ev += "; CONFIG_NO_HZ_FULL=" + orAbsent(d.cfg["CONFIG_NO_HZ_FULL"])
		if asked := d.nohzFullParam(d.iso, d.hasIso); len(asked) > 0 && d.cfg["CONFIG_NO_HZ_FULL"] != "y" {
			return warn(CheckNohzFull, ev+"; nohz_full="+formatCPUList(asked)+" on the command line is ignored: CONFIG_NO_HZ_FULL is not set",
				"use a kernel built with CONFIG_NO_HZ_FULL=y (Debian's standard and -rt kernels are)")
		}
	}
	return warn(CheckNohzFull, ev+": the scheduler tick still interrupts real-time CPUs",
		"boot with nohz_full=N rcu_nocbs=N for the isolated CPUs (needs CONFIG_NO_HZ_FULL=y)")
}

func (d *detector) checkGovernor() Check {
	var seen, bad []string
	for _, cpu := range d.r.OnlineCPUs {
		name := fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu)
		b, err := d.readQuiet(name)
		if err != nil {
			continue
		}
		g := firstLine(b)
		seen = append(seen, fmt.Sprintf("cpu%d=%s", cpu, g))
		if g != "performance" {
			bad = append(bad, fmt.Sprintf("cpu%d=%s", cpu, g))
		}
	}
	if len(d.r.OnlineCPUs) == 0 {
		return warn(CheckCPUFreqGovernor, "online CPUs unknown: governors not read", "")
	}
	if len(seen) == 0 {
		return ok(CheckCPUFreqGovernor, "no cpufreq/scaling_governor: no frequency scaling visible (fixed clock or VM)")
	}
	ev := "scaling_governor " + strings.Join(seen, " ")
	if len(bad) > 0 {
		return warn(CheckCPUFreqGovernor, ev+": frequency changes add latency",
			"cpupower frequency-set -g performance (or echo performance > /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)")
	}
	return ok(CheckCPUFreqGovernor, ev)
}

func (d *detector) checkSMT() Check {
	const f = "sys/devices/system/cpu/smt/active"
	b, err := d.readQuiet(f)
	if err != nil {
		mit, _ := cmdlineValue(d.cmdline, "mitigations")
		if cmdlineHas(d.cmdline, "nosmt") || slices.Contains(strings.Split(mit, ","), "nosmt") {
			return ok(CheckSMT, f+": "+describeErr(err)+"; SMT disabled at boot (nosmt on proc/cmdline)")
		}
		return warn(CheckSMT, f+": "+describeErr(err), "")
	}
	v := firstLine(b)
	ctl := ""
	if cb, err := d.readQuiet("sys/devices/system/cpu/smt/control"); err == nil {
		ctl = "; smt/control=" + firstLine(cb)
	}
	switch v {
	case "0":
		return ok(CheckSMT, f+"=0"+ctl)
	case "1":
		return warn(CheckSMT, f+"=1"+ctl+": a sibling hyperthread shares the core with real-time threads",
			"boot with nosmt, or echo off > /sys/devices/system/cpu/smt/control, or keep the sibling of each isolated CPU idle")
	default:
		return warn(CheckSMT, f+"="+truncate(v, 40)+": garbled", "")
	}
}

func (d *detector) checkHypervisor() Check {
	var signs []string
	if b, err := d.readQuiet("sys/hypervisor/type"); err == nil && firstLine(b) != "" {
		signs = append(signs, "sys/hypervisor/type="+firstLine(b))
	}
	cpuinfoRead := false
	if b, err := readCapped(d.fsys, "proc/cpuinfo", maxConfigFile); err == nil {
		has, found := cpuinfoHasFlag(b, "hypervisor")
		cpuinfoRead = found
		if has {
			signs = append(signs, "proc/cpuinfo flags: hypervisor")
		}
	}
	if b, err := d.readQuiet("sys/class/dmi/id/sys_vendor"); err == nil {
		v := firstLine(b)
		for _, vm := range []string{"QEMU", "KVM", "VMware", "Xen", "innotek", "Microsoft Corporation", "Amazon EC2", "Google", "Firecracker"} {
			if strings.Contains(v, vm) {
				signs = append(signs, "sys/class/dmi/id/sys_vendor="+v)
				break
			}
		}
	}
	if len(signs) > 0 {
		return warn(CheckHypervisor, "running under a hypervisor: "+strings.Join(signs, "; "),
			"run on bare metal for hard real time: the host schedules the virtual CPUs and no guest setting removes that latency")
	}
	if !cpuinfoRead {
		return warn(CheckHypervisor, "proc/cpuinfo: no flags line readable; sys/hypervisor/type absent: could not tell", "")
	}
	return ok(CheckHypervisor, "proc/cpuinfo flags without hypervisor; no sys/hypervisor/type")
}

func (d *detector) checkClocksource() Check {
	const f = "sys/devices/system/clocksource/clocksource0/current_clocksource"
	b, err := d.readQuiet(f)
	if err != nil {
		return warn(CheckClocksource, f+": "+describeErr(err), "")
	}
	v := firstLine(b)
	switch v {
	case "tsc", "kvm-clock", "arch_sys_counter", "hyperv_clocksource_tsc_page", "timebase", "riscv_clocksource":
		return ok(CheckClocksource, f+"="+v)
	default:
		return warn(CheckClocksource, f+"="+truncate(v, 40)+": reading the clock is slow or coarse",
			"use the TSC: boot with clocksource=tsc tsc=reliable (only if the TSC is invariant: constant_tsc nonstop_tsc in /proc/cpuinfo)")
	}
}

func (d *detector) checkHRTimers() Check {
	if d.cfg == nil {
		return warn(CheckHRTimers, "kernel config unreadable (proc/config.gz, boot/config-<release>): could not tell", "")
	}
	v := d.cfg["CONFIG_HIGH_RES_TIMERS"]
	ev := d.r.ConfigSource + ": CONFIG_HIGH_RES_TIMERS=" + orAbsent(v)
	if v == "y" {
		if hv, _ := cmdlineValue(d.cmdline, "highres"); hv == "off" {
			return fail(CheckHRTimers, ev+"; highres=off on the command line: sleeps are rounded to the tick", "remove highres=off from the kernel command line")
		}
		return ok(CheckHRTimers, ev)
	}
	return fail(CheckHRTimers, ev+": sleeps are rounded to the scheduler tick", "use a kernel built with CONFIG_HIGH_RES_TIMERS=y")
}

func (d *detector) checkHZ() Check {
	if d.cfg == nil {
		return warn(CheckHZ, "kernel config unreadable: HZ unknown", "")
	}
	v := d.cfg["CONFIG_HZ"]
	ev := d.r.ConfigSource + ": CONFIG_HZ=" + orAbsent(v)
	if v == "" {
		return warn(CheckHZ, ev, "")
	}
	if d.cfg["CONFIG_HIGH_RES_TIMERS"] != "y" {
		return warn(CheckHZ, ev+" without high-resolution timers: sleep resolution is 1/HZ", "use a kernel with CONFIG_HIGH_RES_TIMERS=y")
	}
	return ok(CheckHZ, ev+" (high-resolution timers make sleeps independent of HZ)")
}

func (d *detector) checkDMALatency() Check {
	const f = "dev/cpu_dma_latency"
	fi, found := exists(d.fsys, f)
	if !found {
		return warn(CheckCPUDMALatency, f+" missing: deep C-states cannot be blocked at run time",
			"boot with processor.max_cstate=1 intel_idle.max_cstate=0 idle=poll, or enable CONFIG_CPU_IDLE's PM QoS device")
	}
	ev := f + " present"
	if d.r.Process.UID > 0 && fi.Mode().Perm()&0o002 == 0 && !d.r.Process.HasCap(1) /* CAP_DAC_OVERRIDE */ {
		return warn(CheckCPUDMALatency, ev+"; uid "+fmt.Sprint(d.r.Process.UID)+" may not be able to write it",
			remedy.DMALatency)
	}
	return ok(CheckCPUDMALatency, ev)
}

func capString(p Process) string {
	if !p.CapEffKnown {
		return "unknown"
	}
	return fmt.Sprintf("%016x", p.CapEff)
}

func yesNo(b, known bool) string {
	switch {
	case !known:
		return "unknown"
	case b:
		return "yes"
	default:
		return "no"
	}
}

func orAbsent(v string) string {
	if v == "" {
		return "absent"
	}
	return v
}
