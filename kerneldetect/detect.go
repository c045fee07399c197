package kerneldetect

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Detect inspects the live system through os.DirFS("/"). Values under
// /proc/self describe the calling process.
func Detect() (*Report, error) {
	return DetectFS(os.DirFS("/"))
}

// DetectFS inspects the tree fsys, laid out like "/" (names such as
// "proc/version", without a leading slash). It returns an error matching
// ErrInvalid only when fsys is nil; unreadable files become unknown fields
// with evidence, never errors.
func DetectFS(fsys fs.FS) (*Report, error) {
	if fsys == nil {
		return nil, fmt.Errorf("detect: nil fs.FS: %w", ErrInvalid)
	}
	d := &detector{fsys: fsys, r: &Report{Process: Process{UID: -1}}}
	d.uname()
	d.config()
	d.distro()
	d.preempt()
	d.dualKernel()
	d.kind()
	d.cpus()
	d.bootParams()
	d.process()
	d.checks()
	return d.r, nil
}

// detector holds the state of one detection run.
type detector struct {
	fsys    fs.FS
	r       *Report
	cfg     map[string]string // nil when no config was readable
	cmdline string
	cmdOK   bool
	vflags  versionFlags
	iso     isolcpus // isolcpus= as the kernel reads it
	hasIso  bool
}

func (d *detector) note(file, value, meaning string) {
	d.r.Evidence = append(d.r.Evidence, Evidence{File: file, Value: value, Meaning: meaning})
}

// read reads a small file; on failure it records the evidence and returns
// ok false.
func (d *detector) read(name, what string) ([]byte, bool) {
	b, err := readCapped(d.fsys, name, maxSmallFile)
	if err != nil {
		d.note(name, describeErr(err), what+" unknown")
		return nil, false
	}
	return b, true
}

// readQuiet reads a small file without recording a failure (for optional
// markers whose absence is normal).
func (d *detector) readQuiet(name string) ([]byte, error) {
	return readCapped(d.fsys, name, maxSmallFile)
}

func (d *detector) uname() {
	if b, ok := d.read("proc/sys/kernel/osrelease", "kernel release"); ok {
		d.r.Uname.Release = firstLine(b)
		d.note("proc/sys/kernel/osrelease", d.r.Uname.Release, "kernel release")
	}
	if b, ok := d.read("proc/sys/kernel/version", "kernel version string"); ok {
		d.r.Uname.Version = firstLine(b)
		d.note("proc/sys/kernel/version", d.r.Uname.Version, "kernel version string")
	}
	if b, ok := d.read("proc/version", "kernel banner"); ok {
		d.r.Uname.Full = firstLine(b)
		d.note("proc/version", d.r.Uname.Full, "kernel banner")
		// Fill what osrelease/version could not give.
		if rest, ok := strings.CutPrefix(d.r.Uname.Full, "Linux version "); ok {
			if d.r.Uname.Release == "" {
				d.r.Uname.Release, _, _ = strings.Cut(rest, " ")
			}
			if d.r.Uname.Version == "" {
				if i := strings.Index(rest, " #"); i >= 0 {
					d.r.Uname.Version = rest[i+1:]
				}
			}
		}
	}
	if b, ok := d.read("proc/cmdline", "kernel command line"); ok {
		d.cmdline, d.cmdOK = firstLine(b), true
	}
	d.vflags = parseVersionFlags(d.r.Uname.Version)
}

func (d *detector) config() {
	if b, err := readCapped(d.fsys, "proc/config.gz", maxConfigFile); err == nil {
		raw, err := gunzipCapped(b, maxConfigFile)
		if err != nil {
			d.note("proc/config.gz", describeErr(err), "kernel config unreadable")
		} else if cfg, err := parseKconfig(raw); err != nil {
			d.note("proc/config.gz", describeErr(err), "kernel config garbled")
		} else {
			d.cfg, d.r.ConfigSource = cfg, "proc/config.gz"
			d.note("proc/config.gz", fmt.Sprintf("%d options", len(cfg)), "kernel config of the running kernel")
			return
		}
	}
	if d.r.Uname.Release == "" || strings.ContainsAny(d.r.Uname.Release, "/\\") || !fs.ValidPath("boot/config-"+d.r.Uname.Release) {
		d.note("boot/config-<release>", "not tried", "kernel config unknown (no usable release)")
		return
	}
	name := "boot/config-" + d.r.Uname.Release
	b, err := readCapped(d.fsys, name, maxConfigFile)
	if err != nil {
		d.note("proc/config.gz, "+name, describeErr(err), "kernel config unknown")
		return
	}
	cfg, err := parseKconfig(b)
	if err != nil {
		d.note(name, describeErr(err), "kernel config garbled")
		return
	}
	d.cfg, d.r.ConfigSource = cfg, name
	d.note(name, fmt.Sprintf("%d options", len(cfg)), "kernel config of the running kernel")
}

// cfgNote records a config option as evidence.
func (d *detector) cfgNote(option, meaning string) {
	v, ok := d.cfg[option]
	if !ok {
		v = "absent"
	}
	d.note(d.r.ConfigSource, option+"="+v, meaning)
}

func (d *detector) preempt() {
	p := &d.r.Preempt
	vf := d.vflags
	if d.r.Uname.Version != "" {
		var flags []string
		for _, f := range []struct {
			on   bool
			name string
		}{{vf.rt, "PREEMPT_RT"}, {vf.preempt, "PREEMPT"}, {vf.dynamic, "PREEMPT_DYNAMIC"}, {vf.lazy, "PREEMPT_LAZY"}} {
			if f.on {
				flags = append(flags, f.name)
			}
		}
		if len(flags) == 0 {
			flags = []string{"none"}
		}
		d.note("proc/sys/kernel/version", strings.Join(flags, " "), "preemption flags in the version string")
	}
	// Build-time model: the config is the most precise source; the version
	// string only tells PREEMPT / PREEMPT_RT / PREEMPT_DYNAMIC.
	if d.cfg != nil {
		p.Model, p.Dynamic = configModel(d.cfg)
		if p.Model != "" {
			p.Source = d.r.ConfigSource
		}
		d.cfgNote("CONFIG_PREEMPT_RT", "PREEMPT_RT build")
		d.cfgNote("CONFIG_PREEMPT_DYNAMIC", "preemption mode selectable at boot/run time")
	}
	const versionFile = "proc/sys/kernel/version"
	switch {
	case vf.rt && p.Model != ModelRT:
		p.Model, p.Source = ModelRT, versionFile
	case p.Model == "" && vf.lazy:
		p.Model, p.Source = ModelLazy, versionFile
	case p.Model == "" && vf.preempt:
		p.Model, p.Source = ModelFull, versionFile
	}
	p.Dynamic = p.Dynamic || vf.dynamic
	if b, err := d.readQuiet("sys/kernel/realtime"); err == nil {
		v := firstLine(b)
		d.r.Realtime = v == "1"
		d.note("sys/kernel/realtime", v, "RT patch marker (kernels before mainline 6.12)")
		if d.r.Realtime && p.Model != ModelRT {
			p.Model, p.Source = ModelRT, "sys/kernel/realtime"
		}
	} else {
		d.note("sys/kernel/realtime", describeErr(err), "no RT patch marker (normal for mainline >= 6.12 PREEMPT_RT)")
	}
	if p.Model == "" && d.r.Uname.Version != "" && !p.Dynamic {
		// A non-dynamic kernel without PREEMPT in its version string is
		// none or voluntary: both are vanilla, the config would tell which.
		d.note("proc/sys/kernel/version", d.r.Uname.Version, "no PREEMPT flag: model none or voluntary (config unreadable)")
	}
	if !p.Dynamic {
		if v, ok := cmdlineValue(d.cmdline, "preempt"); ok {
			d.note("proc/cmdline", "preempt="+truncate(v, 40), "ignored: the kernel is not PREEMPT_DYNAMIC")
		}
		return
	}
	// Current mode of a PREEMPT_DYNAMIC kernel: the mode now (debugfs),
	// else the mode chosen at boot, else the config's default. Under
	// PREEMPT_RT the mode is recorded, but the model stays rt.
	setMode := func(m, source string) {
		p.Mode = m
		if p.Model != ModelRT {
			p.Source = source
		}
	}
	if b, err := d.readQuiet("sys/kernel/debug/sched/preempt"); err == nil {
		if m, err := parsePreemptDebugfs(b); err == nil {
			setMode(m, "sys/kernel/debug/sched/preempt")
			d.note("sys/kernel/debug/sched/preempt", firstLine(b), "current preemption mode "+m+" (decides over preempt= and the config)")
			return
		} else {
			d.note("sys/kernel/debug/sched/preempt", firstLine(b), describeErr(err))
		}
	} else {
		d.note("sys/kernel/debug/sched/preempt", describeErr(err), "current mode not readable from debugfs")
	}
	if !d.cmdOK {
		return
	}
	v, given := cmdlineValue(d.cmdline, "preempt")
	if given {
		if validMode(v) {
			setMode(v, "proc/cmdline")
			d.note("proc/cmdline", "preempt="+v, "boot-time preemption mode (overrides the config default "+orDash(p.Model)+
				"; debugfs, unreadable here, would show a later run-time change)")
			return
		}
		d.note("proc/cmdline", "preempt="+truncate(v, 40), "unknown preemption mode: the kernel rejects it and keeps its default")
	}
	if validMode(p.Model) {
		p.Mode = p.Model
		seen := "no preempt="
		if given {
			seen = "no valid preempt="
		}
		d.note("proc/cmdline", seen, "mode is the config default "+p.Model+" unless changed at run time through debugfs")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (d *detector) dualKernel() {
	// RTAI.
	rel := d.r.Uname.Release
	var rtaiSeen bool
	if strings.Contains(rel, "-rtai") || strings.Contains(rel, ".rtai") {
		rtaiSeen = true
		d.note("proc/sys/kernel/osrelease", rel, "RTAI kernel release")
	}
	if _, ok := exists(d.fsys, "proc/rtai/hal"); ok {
		rtaiSeen = true
		d.note("proc/rtai/hal", "present", "RTAI HAL loaded")
	}
	if b, err := d.readQuiet("proc/modules"); err == nil && modulesHas(b, "rtai_hal") {
		rtaiSeen = true
		d.note("proc/modules", "rtai_hal", "RTAI HAL module loaded")
	}
	if rtaiSeen {
		d.r.RTAI = &RTAIInfo{}
		if b, err := d.readQuiet("sys/module/rtai_hal/version"); err == nil {
			d.r.RTAI.Version = firstLine(b)
			d.note("sys/module/rtai_hal/version", d.r.RTAI.Version, "RTAI version")
		}
	}
	// Xenomai 3 Cobalt.
	if _, ok := exists(d.fsys, "proc/xenomai"); ok {
		x := &XenomaiInfo{Core: "cobalt"}
		if b, err := d.readQuiet("proc/xenomai/version"); err == nil {
			x.Version = firstLine(b)
			d.note("proc/xenomai/version", x.Version, "Xenomai 3 Cobalt core")
		} else {
			d.note("proc/xenomai/version", describeErr(err), "Cobalt core present, version unknown")
		}
		if b, err := d.readQuiet("sys/module/xenomai/parameters/allowed_group"); err == nil {
			x.AllowedGroup = firstLine(b)
			d.note("sys/module/xenomai/parameters/allowed_group", x.AllowedGroup, "group allowed to use Cobalt (-1: root only)")
		}
		if _, ok := exists(d.fsys, "dev/rtdm"); ok {
			d.note("dev/rtdm", "present", "RTDM device directory")
		}
		switch {
		case d.fileExists("proc/ipipe"):
			x.Pipeline = "ipipe"
			if b, err := d.readQuiet("proc/ipipe/version"); err == nil {
				d.note("proc/ipipe/version", firstLine(b), "I-pipe interrupt pipeline")
			} else {
				d.note("proc/ipipe", "present", "I-pipe interrupt pipeline")
			}
		case d.cfg["CONFIG_IPIPE"] == "y":
			x.Pipeline = "ipipe"
			d.cfgNote("CONFIG_IPIPE", "I-pipe interrupt pipeline")
		case d.cfg["CONFIG_DOVETAIL"] == "y":
			x.Pipeline = "dovetail"
			d.cfgNote("CONFIG_DOVETAIL", "Dovetail interrupt pipeline")
		default:
			// Cobalt runs on I-pipe or Dovetail; I-pipe always creates
			// /proc/ipipe.
			x.Pipeline = "dovetail"
			d.note("proc/ipipe", "missing", "no I-pipe under Cobalt: Dovetail pipeline")
		}
		d.r.Xenomai = x
		return
	}
	// Xenomai 4 EVL.
	_, ctl := exists(d.fsys, "dev/evl/control")
	_, sysEVL := exists(d.fsys, "sys/devices/virtual/evl")
	if ctl || sysEVL {
		x := &XenomaiInfo{Core: "evl", Version: "4", Pipeline: "dovetail"}
		if ctl {
			d.note("dev/evl/control", "present", "Xenomai 4 EVL core")
		}
		if sysEVL {
			d.note("sys/devices/virtual/evl", "present", "Xenomai 4 EVL core")
		}
		if b, err := d.readQuiet("sys/devices/virtual/evl/control/abi"); err == nil {
			x.ABI = firstLine(b)
			d.note("sys/devices/virtual/evl/control/abi", x.ABI, "EVL ABI level")
		}
		if b, err := d.readQuiet("sys/devices/virtual/evl/control/state"); err == nil {
			d.note("sys/devices/virtual/evl/control/state", firstLine(b), "EVL core state")
		}
		d.r.Xenomai = x
	}
}

func (d *detector) fileExists(name string) bool {
	_, ok := exists(d.fsys, name)
	return ok
}

func (d *detector) kind() {
	r := d.r
	var why string
	switch {
	case r.RTAI != nil:
		r.Kind, why = RTAI, "RTAI markers present"
	case r.Xenomai != nil:
		r.Kind, why = Xenomai, "Xenomai "+r.Xenomai.Core+" core present"
	case r.Preempt.Model == ModelRT:
		r.Kind, why = PreemptRT, "PREEMPT_RT kernel"
	case r.Preempt.Effective() == ModelFull || r.Preempt.Effective() == ModelLazy:
		r.Kind, why = Preempt, "fully preemptible ("+r.Preempt.Effective()+")"
	case r.Uname.Release != "" || r.Uname.Version != "":
		r.Kind = Vanilla
		if e := r.Preempt.Effective(); e != "" {
			why = "preemption " + e
		} else {
			why = "no preemption marker"
		}
	default:
		r.Kind, why = Unknown, "no kernel identity readable"
	}
	d.note("", r.Kind.String(), "kind: "+why)
}

func (d *detector) cpuList(name, what string) []int {
	b, err := d.readQuiet(name)
	if err != nil {
		d.note(name, describeErr(err), what+" unknown")
		return nil
	}
	cpus, err := parseCPUList(b)
	if err != nil {
		d.note(name, firstLine(b), what+" garbled: "+err.Error())
		return nil
	}
	d.note(name, firstLine(b), what)
	return cpus
}

func (d *detector) cpus() {
	d.r.OnlineCPUs = d.cpuList("sys/devices/system/cpu/online", "online CPUs")
	d.r.IsolatedCPUs = d.cpuList("sys/devices/system/cpu/isolated", "isolated CPUs")
	d.r.NohzFull = d.cpuList("sys/devices/system/cpu/nohz_full", "nohz_full CPUs")
	// sysfs shows what the kernel applied; only where it cannot be read
	// does the command line stand in, as the kernel would apply it.
	d.iso, d.hasIso = d.isolcpus()
	iso, hasIso := d.iso, d.hasIso
	if d.r.IsolatedCPUs == nil && !d.fileExists("sys/devices/system/cpu/isolated") && hasIso && iso.domain && len(iso.cpus) > 0 {
		d.r.IsolatedCPUs = iso.cpus
		d.note("proc/cmdline", "isolcpus="+iso.flags()+","+formatCPUList(iso.cpus), "isolated CPUs (sysfs unreadable: the command line's domain isolation)")
	}
	if d.r.NohzFull == nil && !d.fileExists("sys/devices/system/cpu/nohz_full") && d.cfg["CONFIG_NO_HZ_FULL"] == "y" {
		if cpus := d.nohzFullParam(iso, hasIso); len(cpus) > 0 {
			d.r.NohzFull = cpus
			d.note("proc/cmdline", formatCPUList(cpus), "nohz_full CPUs (sysfs unreadable: nohz_full= and isolcpus=nohz on the command line)")
		}
	}
}

// nrCPUs is the number of CPUs "all" and "N" in a boot CPU list stand
// for: one past the highest online CPU (0 when unknown).
func (d *detector) nrCPUs() int {
	if n := len(d.r.OnlineCPUs); n > 0 {
		return d.r.OnlineCPUs[n-1] + 1
	}
	return 0
}

// isolcpus parses isolcpus= from the command line, noting what it means.
func (d *detector) isolcpus() (isolcpus, bool) {
	v, has := cmdlineValue(d.cmdline, "isolcpus")
	if !has {
		return isolcpus{}, false
	}
	iso, err := parseIsolcpus(v, d.nrCPUs())
	if err != nil {
		d.note("proc/cmdline", "isolcpus="+truncate(v, 60), "garbled: "+err.Error())
		return isolcpus{}, false
	}
	meaning := "isolates CPUs " + orDash(formatCPUList(iso.cpus)) + " from: " + iso.flags()
	if len(iso.unknown) > 0 {
		meaning += " (unknown flags, skipped by the kernel: " + strings.Join(iso.unknown, ",") + ")"
	}
	d.note("proc/cmdline", "isolcpus="+truncate(v, 60), meaning)
	return iso, true
}

// nohzFullParam returns the CPUs the command line asks to run tickless:
// nohz_full= and isolcpus= with the nohz flag.
func (d *detector) nohzFullParam(iso isolcpus, hasIso bool) []int {
	var cpus []int
	if v, has := cmdlineValue(d.cmdline, "nohz_full"); has {
		if c, err := parseCmdlineCPUList(v, d.nrCPUs()); err == nil {
			cpus = c
		} else {
			d.note("proc/cmdline", "nohz_full="+truncate(v, 60), "garbled: "+err.Error())
		}
	}
	if hasIso && iso.nohz {
		cpus = append(cpus, iso.cpus...)
		slices.Sort(cpus)
		cpus = slices.Compact(cpus)
	}
	return cpus
}

// bootParams works out the settings whose config default a boot parameter
// overrides, the way the kernel applies them.
func (d *detector) bootParams() {
	r := d.r
	// RCU callback offloading: rcu_nocbs=, implied by nohz_full.
	switch v, has := cmdlineValue(d.cmdline, "rcu_nocbs"); {
	case d.cfg == nil:
		d.note("proc/cmdline", "rcu_nocbs", "RCU offloading unknown: kernel config unreadable")
	case d.cfg["CONFIG_RCU_NOCB_CPU"] != "y":
		if has {
			d.note("proc/cmdline", "rcu_nocbs="+truncate(v, 60), "ignored: CONFIG_RCU_NOCB_CPU is not set")
		}
	default:
		var cpus []int
		switch {
		case has && v != "":
			c, err := parseCmdlineCPUList(v, d.nrCPUs())
			if err != nil {
				d.note("proc/cmdline", "rcu_nocbs="+truncate(v, 60), "garbled: "+err.Error())
			}
			cpus = c
		case has:
			d.note("proc/cmdline", "rcu_nocbs", "RCU offloading possible on every CPU, none offloaded at boot")
		case d.cfg["CONFIG_RCU_NOCB_CPU_DEFAULT_ALL"] == "y":
			cpus = r.OnlineCPUs
			d.cfgNote("CONFIG_RCU_NOCB_CPU_DEFAULT_ALL", "RCU callbacks of every CPU offloaded by default")
		}
		if len(r.NohzFull) > 0 {
			cpus = append(slices.Clone(cpus), r.NohzFull...)
			slices.Sort(cpus)
			cpus = slices.Compact(cpus)
		}
		if len(cpus) > 0 {
			r.RCUNoCBs = cpus
			d.note("proc/cmdline", "rcu_nocbs "+formatCPUList(cpus), "CPUs whose RCU callbacks run in kthreads (rcu_nocbs= and nohz_full, which implies it)")
		}
	}

	// Threaded interrupt handlers.
	switch {
	case r.Preempt.Model == ModelRT:
		r.ThreadedIRQs = Setting{Value: "yes", Source: "preempt"}
		d.note(r.Preempt.Source, "PREEMPT_RT", "interrupt handlers always run in threads")
	case cmdlineHas(d.cmdline, "threadirqs") && d.cfg == nil:
		d.note("proc/cmdline", "threadirqs", "threaded interrupts unknown: CONFIG_IRQ_FORCED_THREADING unreadable")
	case cmdlineHas(d.cmdline, "threadirqs") && d.cfg["CONFIG_IRQ_FORCED_THREADING"] == "y":
		r.ThreadedIRQs = Setting{Value: "yes", Source: "proc/cmdline"}
		d.note("proc/cmdline", "threadirqs", "interrupt handlers forced into threads (CONFIG_IRQ_FORCED_THREADING=y)")
	case cmdlineHas(d.cmdline, "threadirqs"):
		r.ThreadedIRQs = Setting{Value: "no", Source: r.ConfigSource}
		d.note("proc/cmdline", "threadirqs", "ignored: CONFIG_IRQ_FORCED_THREADING is not set")
	case d.cmdOK:
		r.ThreadedIRQs = Setting{Value: "no", Source: "proc/cmdline"}
	}

	// CPU vulnerability mitigations.
	v, has := cmdlineValue(d.cmdline, "mitigations")
	mode, _, _ := strings.Cut(v, ",")
	switch {
	case has && (mode == "off" || mode == "auto"):
		r.Mitigations = Setting{Value: truncate(v, 60), Source: "proc/cmdline"}
		d.note("proc/cmdline", "mitigations="+truncate(v, 60), "CPU vulnerability mitigations set at boot")
	case d.cfg != nil:
		if has {
			d.note("proc/cmdline", "mitigations="+truncate(v, 60), "unsupported: the kernel keeps its default")
		}
		r.Mitigations = Setting{Value: "auto", Source: r.ConfigSource}
		for _, opt := range []string{"CONFIG_CPU_MITIGATIONS", "CONFIG_SPECULATION_MITIGATIONS"} {
			if d.cfg[opt] == "n" {
				r.Mitigations.Value = "off"
				d.cfgNote(opt, "CPU vulnerability mitigations off by default")
			}
		}
	}
}

func (d *detector) process() {
	p := &d.r.Process
	if b, ok := d.read("proc/self/status", "capabilities"); ok {
		st, err := parseStatus(b)
		if st.uidKnown {
			p.UID = st.uid
		}
		if err != nil {
			d.note("proc/self/status", describeErr(err), "capabilities unknown")
		} else {
			p.CapEff, p.CapEffKnown = st.capEff, true
			d.note("proc/self/status", "CapEff: "+strconv.FormatUint(st.capEff, 16), "effective capabilities")
		}
	}
	if b, ok := d.read("proc/self/limits", "resource limits"); ok {
		lim, err := parseLimits(b)
		if err != nil {
			d.note("proc/self/limits", describeErr(err), "some limits unknown")
		}
		p.RTPrio = lim["Max realtime priority"]
		p.Memlock = lim["Max locked memory"]
		d.note("proc/self/limits", "rtprio "+limitString(p.RTPrio), "RLIMIT_RTPRIO")
		d.note("proc/self/limits", "memlock "+limitString(p.Memlock), "RLIMIT_MEMLOCK")
	}
}

func limitString(l Limit) string {
	if !l.Known {
		return "unknown"
	}
	f := func(v int64) string {
		if v == Unlimited {
			return "unlimited"
		}
		return strconv.FormatInt(v, 10)
	}
	return "soft " + f(l.Soft) + ", hard " + f(l.Hard)
}
